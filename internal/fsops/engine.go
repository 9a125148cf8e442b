package fsops

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/atomicfile"
	"github.com/hearth-dev/hearth/internal/document"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup"
	"github.com/hearth-dev/hearth/internal/store"
)

// Bounds of the mutating operations.
const (
	// DefaultInlinePriorMax is the largest prior content kept inside the
	// receipt row; larger prior content is spilled to a file in SpillDir.
	DefaultInlinePriorMax = 256 << 10
	// MaxInMemory is the largest file read whole into memory: the largest
	// file patch works on, and the largest prior content kept without
	// streaming it to the spill directory.
	MaxInMemory = 32 << 20
	// MaxUndoPrior is the largest existing file write will replace: a
	// larger one could not be given an undo copy at reasonable cost.
	MaxUndoPrior = 256 << 20
	// newFilePerm is the mode of a file fs creates (an existing file keeps
	// its own).
	newFilePerm = 0o644
)

// Engine runs the fs operations. DB, Roots and SpillDir are required (the
// spill directory holds prior content of large files for undo, and should be
// under Hearth's data directory, which Roots denies). Recover must be called
// once before the first operation. An Engine is safe for concurrent use
// (mutations of one path are serialized) and must not be copied once used.
type Engine struct {
	DB       *store.DB
	Roots    Roots
	SpillDir string
	// Replacer does the atomic replaces; its zero value has the defaults.
	Replacer atomicfile.Replacer
	// InlinePriorMax overrides DefaultInlinePriorMax when positive.
	InlinePriorMax int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Writes is the allowlist of ordinary writes (internal/risk) a write
	// admitted as ordinary is held to when it opens its file; nil is this
	// OS's from the process environment.
	Writes *risk.Writes
	// Places is the persistence table the write-time check holds a write
	// admitted as ordinary to (nil: this OS's, from the process
	// environment), as governance matched it at admission.
	Places *risk.Places
	// Startup is the index of what starts by itself (internal/startup),
	// the one governance checks writes with: the write-time check refuses
	// a write admitted as ordinary to a file it names, and every change
	// the engine completes is told to it (Touched) so the next check sees
	// it. Nil is this OS's, from the process environment.
	Startup *startup.Index
	// Documents reads PDF, Word, Excel, PowerPoint and OpenDocument
	// files for read and search; its CacheDir (under the data folder)
	// keeps the PDF engine's compiled code across restarts.
	Documents document.Reader

	locks      pathLocks
	hashes     hashCache
	writesOnce sync.Once
	placesOnce sync.Once
	startOnce  sync.Once
	startErr   error

	seams seams
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) inlineMax() int {
	if e.InlinePriorMax > 0 {
		return e.InlinePriorMax
	}
	return DefaultInlinePriorMax
}

// WriteInput is the input of write. ExpectedSHA256 absent means no check,
// null means the file must not exist, a hash means it must exist with it.
type WriteInput struct {
	Path           string `json:"path"`
	Data           string `json:"data"`
	Encoding       string `json:"encoding,omitempty"` // utf8 (default) or base64
	ExpectedSHA256 Expect `json:"expected_sha256,omitzero"`
}

// PatchInput is the input of patch.
type PatchInput struct {
	Path           string        `json:"path"`
	Replacements   []Replacement `json:"replacements"`
	ExpectedSHA256 Expect        `json:"expected_sha256,omitzero"`
}

// UndoInput is the input of undo: one receipt_id, or up to MaxUndoIDs
// receipt_ids (UndoMany).
type UndoInput struct {
	ReceiptID  string   `json:"receipt_id,omitempty"`
	ReceiptIDs []string `json:"receipt_ids,omitempty"`
}

// MutationResult is what every write, patch and undo returns. SHA256 is the
// file's new hash (null when the operation removed the file); a later undo
// of ReceiptID conflicts unless the file still has it.
type MutationResult struct {
	Path            string  `json:"path"`
	ReceiptID       string  `json:"receipt_id"`
	SHA256          *string `json:"sha256"`
	PreviousSHA256  *string `json:"previous_sha256"` // null when the file did not exist
	Size            int64   `json:"size"`
	Created         bool    `json:"created,omitempty"`
	Deleted         bool    `json:"deleted,omitempty"`
	ReplaceAttempts int     `json:"replace_attempts"`
	// Warning is set when the change is in place but its durability across
	// a power loss could not be confirmed.
	Warning string `json:"warning,omitempty"`
}

// WriteResult is the output of write.
type WriteResult struct {
	MutationResult
}

// PatchResult is the output of patch. NormalizedLineEndings says an old
// text was written with other line endings than the file's and was matched
// (and applied) in the file's own.
type PatchResult struct {
	MutationResult
	Replacements          int  `json:"replacements"`
	NormalizedLineEndings bool `json:"normalized_line_endings"`
}

// UndoResult is the output of undo.
type UndoResult struct {
	MutationResult
	UndoneReceiptID string `json:"undone_receipt_id"`
}

// Write replaces (or creates, with missing parent directories) a file with
// in.Data, checking in.ExpectedSHA256 first. route is the conversation the
// receipt is recorded for.
func (e *Engine) Write(ctx context.Context, route string, in WriteInput) (WriteResult, error) {
	enc, err := encoding(in.Encoding)
	if err != nil {
		return WriteResult{}, err
	}
	data := []byte(in.Data)
	if enc == EncodingBase64 {
		if data, err = base64.StdEncoding.DecodeString(in.Data); err != nil {
			return WriteResult{}, &InputError{Field: "data", Message: base64Problem(err)}
		}
	}
	abs, err := e.Roots.Resolve(in.Path)
	if err != nil {
		return WriteResult{}, err
	}
	res, err := e.mutate(ctx, mutation{route: route, op: "write", path: abs, expect: in.ExpectedSHA256, mkdir: true,
		change: func(snapshot) ([]byte, error) { return data, nil }})
	return WriteResult{res}, err
}

// Patch applies in.Replacements to an existing file (see applyPatch for the
// matching rules), checking in.ExpectedSHA256 first.
func (e *Engine) Patch(ctx context.Context, route string, in PatchInput) (PatchResult, error) {
	if len(in.Replacements) == 0 {
		return PatchResult{}, &InputError{Field: "replacements", Message: "give at least one {old, new} replacement"}
	}
	abs, err := e.Roots.Resolve(in.Path)
	if err != nil {
		return PatchResult{}, err
	}
	var normalized bool
	res, err := e.mutate(ctx, mutation{route: route, op: "patch", path: abs, expect: in.ExpectedSHA256,
		change: func(s snapshot) ([]byte, error) {
			if !s.exists {
				return nil, fmt.Errorf("patch %s: %w", abs, fs.ErrNotExist)
			}
			if s.data == nil && s.size > 0 {
				return nil, fmt.Errorf("patch %s (%d bytes, at most %d): %w", abs, s.size, MaxInMemory, ErrTooLarge)
			}
			out, norm, err := applyPatch(s.data, in.Replacements)
			if err != nil {
				var ce *ConflictError
				if errors.As(err, &ce) {
					ce.Path, ce.Actual = abs, &s.sha
				}
				return nil, err
			}
			normalized = norm
			return out, nil
		}})
	return PatchResult{MutationResult: res, Replacements: len(in.Replacements), NormalizedLineEndings: normalized}, err
}

// mutation describes one write, patch or undo for mutate.
type mutation struct {
	route, op, path string
	expect          Expect
	mkdir           bool
	undoes          string
	// operator and batch mark the operator's undo (operatorUndo);
	// alsoUndone are more receipts it undoes (an "Undo all" of a file
	// undoes every change of the chat to it).
	operator, batch string
	alsoUndone      []string
	// check runs under the path lock before anything changes.
	check func(snapshot) error
	// change returns the new content, or changeReader streams it, or
	// removeFile removes the file.
	change       func(snapshot) ([]byte, error)
	changeReader func(snapshot) (io.ReadCloser, error)
	removeFile   bool
	// fromBin, with changeReader reading it, is the item in the trash
	// that holds the new content: it is moved back rather than copied,
	// so the trash keeps no copy of a file that is back in its place.
	fromBin string
}

// snapshot is a file's state before a mutation: its hash and size, and its
// content in data (up to MaxInMemory) or in spill (a file in the spill
// directory).
type snapshot struct {
	exists bool
	sha    string
	size   int64
	data   []byte
	spill  string
}

// mutate is the one path of every write, patch and undo:
//
//  1. lock the path; snapshot the current file (hash, and its content for
//     the receipt, spilled to SpillDir/<receipt>.prior when large);
//  2. check the precondition (expected_sha256, or undo's checks);
//  3. record the directory as touched and insert the receipt as 'pending';
//  4. replace the file atomically (temporary file + fsync + rename + fsync
//     of the directory), or remove it;
//  5. mark the receipt 'committed' (for an undo, and the undone receipt
//     undone, in the same transaction).
//
// A crash before 4 leaves the old file and a pending receipt (or none); a
// crash between 4 and 5 leaves the new file and a pending receipt. Recover
// settles pending receipts at start-up by the file's hash: committed when
// the new content is there, void otherwise. A failed replace marks the
// receipt void at once. The target is never a mix of old and new, and no
// temporary or spill file outlives the next Recover.
func (e *Engine) mutate(ctx context.Context, m mutation) (MutationResult, error) {
	unlockShape := e.locks.lockAll(shapeKeys(m.path))
	defer unlockShape()
	unlock := e.locks.lock(pathKey(m.path))
	defer unlock()

	id := newReceiptID()
	snap, err := e.snapshot(m.path, id)
	if err != nil {
		return MutationResult{}, err
	}
	keep := false
	defer func() {
		if !keep && snap.spill != "" {
			os.Remove(filepath.Join(e.SpillDir, snap.spill))
		}
	}()
	if err := checkExpect(m.path, m.expect, snap); err != nil {
		return MutationResult{}, err
	}
	if m.check != nil {
		if err := m.check(snap); err != nil {
			return MutationResult{}, err
		}
	}

	// left is what the file gets (no head when it is removed), which the
	// check below holds to the allowlist.
	var data []byte
	var left leaves
	var src io.ReadCloser
	switch {
	case m.change != nil:
		if data, err = m.change(snap); err != nil {
			return MutationResult{}, err
		}
		left = leavesBytes(m.path, data)
	case m.removeFile:
	default:
		if src, err = m.changeReader(snap); err != nil {
			return MutationResult{}, err
		}
		defer src.Close()
		if risk.NeedsPackageCheck(m.path) {
			left.macros = packageMacrosOf(src)
		}
		if src, left.head, err = peekHead(src); err != nil {
			return MutationResult{}, fmt.Errorf("read the content for %s: %w", m.path, err)
		}
	}
	// A write admitted as ordinary is held to what admission saw before
	// it creates a folder too: a refused write leaves no folder behind
	// (an empty refs/ or objects/ completes a git folder's shape).
	if m.mkdir {
		if err := e.checkOrdinary(checkedOf(ctx), m.path, left); err != nil {
			return MutationResult{}, err
		}
		if err := os.MkdirAll(filepath.Dir(m.path), 0o755); err != nil {
			return MutationResult{}, fmt.Errorf("create directory for %s: %w", m.path, err)
		}
	}
	// The file is opened for the replace: a write admitted as ordinary
	// is held to what admission saw, now.
	if err := e.checkOrdinary(checkedOf(ctx), m.path, left); err != nil {
		return MutationResult{}, err
	}

	// The post-hash must be known before the rename so a crash right after
	// it can be settled; a streamed undo knows it from the undone receipt.
	var post sql.NullString
	switch {
	case m.change != nil:
		post = sql.NullString{String: hashBytes(data), Valid: true}
	case src != nil:
		r, err := e.loadReceipt(ctx, m.route, m.undoes)
		if err != nil {
			return MutationResult{}, err
		}
		post = r.pre
	}

	created := e.now().UnixMilli()
	err = e.DB.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO fs_touched_dirs(dir, touched_at) VALUES (?, ?)
			 ON CONFLICT(dir) DO UPDATE SET touched_at = excluded.touched_at`,
			filepath.Dir(m.path), created); err != nil {
			return err
		}
		var priorFile, priorSHA sql.NullString
		if snap.exists {
			if snap.spill != "" {
				priorFile = sql.NullString{String: snap.spill, Valid: true}
			} else {
				// Inline prior content is stored once per content.
				prior := snap.data
				if prior == nil {
					prior = []byte{}
				}
				if _, err := tx.ExecContext(ctx,
					`INSERT INTO fs_priors(sha256, data, size) VALUES (?, ?, ?) ON CONFLICT(sha256) DO NOTHING`,
					snap.sha, prior, len(prior)); err != nil {
					return err
				}
				priorSHA = sql.NullString{String: snap.sha, Valid: true}
			}
		}
		_, err := tx.ExecContext(ctx,
			`INSERT INTO fs_receipts(id, route, op, path, existed_before, pre_sha256, post_sha256,
			   prior_sha256, prior_file, prior_size, undoes, state, created_at, future_id, operator, batch)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
			id, m.route, m.op, m.path, snap.exists, nullIf(!snap.exists, snap.sha), post,
			priorSHA, priorFile, snap.size, nullIf(m.undoes == "", m.undoes), created,
			nullIf(m.operator != "" || futureOf(ctx) == "", futureOf(ctx)), nullIf(m.operator == "", m.operator), nullIf(m.batch == "", m.batch))
		return err
	})
	if err != nil {
		return MutationResult{}, fmt.Errorf("record receipt for %s: %w", m.path, err)
	}
	keep = true // the pending receipt refers to the spill file now

	var attempts int
	// bin is where in the trash a removed file went, when the removal is
	// a move to the trash and the trash says: the receipt keeps it, so
	// its undo (a Redo) can take the file back out.
	var bin string
	switch {
	case m.removeFile:
		r := e.Replacer
		if r.Remove != nil {
			// Replacer.Remove set is removal to the trash (MoveToTrash);
			// trashItem is MoveToTrash that also says where it went.
			r.Remove = func(p string) error {
				w, err := trashItem(p)
				bin = w
				return err
			}
		}
		attempts, err = r.RemoveFile(m.path)
	case m.fromBin != "":
		src.Close()
		err = restoreFromTrash(m.fromBin, m.path)
	case src != nil:
		attempts, err = e.Replacer.WriteFrom(m.path, src, newFilePerm)
	default:
		attempts, err = e.Replacer.Write(m.path, data, newFilePerm)
	}
	var warning string
	if errors.Is(err, atomicfile.ErrNotDurable) {
		warning, err = err.Error(), nil
	}
	if err != nil {
		if verr := e.voidReceipt(ctx, id, snap.spill); verr != nil {
			err = errors.Join(err, verr)
		}
		return MutationResult{ReplaceAttempts: attempts}, err
	}

	err = e.DB.InTx(ctx, func(tx *sql.Tx) error {
		at := e.now().UnixMilli()
		if err := commitReceipt(ctx, tx, id, m.undoes, at); err != nil {
			return err
		}
		if bin != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE fs_receipts SET bin_path = ? WHERE id = ?`, bin, id); err != nil {
				return err
			}
		}
		for _, u := range m.alsoUndone {
			if _, err := tx.ExecContext(ctx,
				`UPDATE fs_receipts SET undone_at = ?, undone_by = ? WHERE id = ? AND undone_by IS NULL`, at, id, u); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return MutationResult{}, fmt.Errorf("%s was changed, but its receipt %s could not be committed (the next start settles it): %w", m.path, id, err)
	}
	e.changed()

	res := MutationResult{
		Path:            m.path,
		ReceiptID:       id,
		PreviousSHA256:  ptrIf(snap.exists, snap.sha),
		Created:         !snap.exists && !m.removeFile,
		Deleted:         m.removeFile,
		ReplaceAttempts: attempts,
		Warning:         warning,
	}
	if post.Valid {
		res.SHA256 = &post.String
	}
	if !m.removeFile {
		if info, err := os.Stat(m.path); err == nil {
			res.Size = info.Size()
		}
	}
	return res, nil
}

func checkExpect(path string, want Expect, s snapshot) error {
	if !want.Set {
		return nil
	}
	ce := &ConflictError{Path: path, Expected: want.String(), Replacement: -1}
	if s.exists {
		ce.Actual = &s.sha
	}
	switch {
	case want.Null && s.exists:
		ce.Reason, ce.Message = ReasonExists, "expected_sha256 is null (file must not exist), but the file exists"
	case !want.Null && !s.exists:
		ce.Reason, ce.Message = ReasonMissing, "expected_sha256 is set, but the file does not exist"
	case !want.Null && s.sha != want.SHA:
		ce.Reason, ce.Message = ReasonHashMismatch, "the file's sha256 is not expected_sha256; re-read it"
	default:
		return nil
	}
	return ce
}

// snapshot reads the state of path before a change, hashing it and keeping
// its content: in memory up to the inline limit (and up to MaxInMemory, so
// patch can work on it), spilled to SpillDir/<id>.prior beyond the inline
// limit.
func (e *Engine) snapshot(path, id string) (snapshot, error) {
	f, err := openRead(path)
	if errors.Is(err, fs.ErrNotExist) {
		return snapshot{}, nil
	}
	if err != nil {
		return snapshot{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	info, err := e.view().opened(f)
	if err != nil {
		return snapshot{}, fmt.Errorf("stat %s: %w", path, err)
	}
	if !info.Mode().IsRegular() {
		return snapshot{}, &InputError{Field: "path", Message: fmt.Sprintf("%s is a %s, not a file", path, typeOf(info.Mode()))}
	}
	if info.Size() > MaxUndoPrior {
		return snapshot{}, fmt.Errorf("%s is %d bytes, more than the %d Hearth keeps an undo copy of: %w",
			path, info.Size(), MaxUndoPrior, ErrTooLarge)
	}
	s := snapshot{exists: true, size: info.Size()}
	if info.Size() <= MaxInMemory {
		if s.data, err = io.ReadAll(f); err != nil {
			return snapshot{}, fmt.Errorf("read %s: %w", path, err)
		}
		s.size, s.sha = int64(len(s.data)), hashBytes(s.data)
		if len(s.data) <= e.inlineMax() {
			return s, nil
		}
		s.spill = id + ".prior"
		if err := e.writeSpill(s.spill, func(w io.Writer) error { _, err := w.Write(s.data); return err }); err != nil {
			return snapshot{}, err
		}
		return s, nil
	}
	s.spill = id + ".prior"
	var n int64
	err = e.writeSpill(s.spill, func(w io.Writer) error {
		h := sha256.New()
		n, err = io.Copy(io.MultiWriter(w, h), f)
		s.sha = hex.EncodeToString(h.Sum(nil))
		return err
	})
	if err != nil {
		return snapshot{}, fmt.Errorf("keep undo copy of %s: %w", path, err)
	}
	s.size = n
	return s, nil
}

// writeSpill writes one spill file durably.
func (e *Engine) writeSpill(name string, fill func(io.Writer) error) error {
	if e.SpillDir == "" {
		return errors.New("fsops: Engine.SpillDir is not set")
	}
	if err := os.MkdirAll(e.SpillDir, 0o700); err != nil {
		return fmt.Errorf("create spill directory: %w", err)
	}
	p := filepath.Join(e.SpillDir, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create spill file: %w", err)
	}
	err = fill(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return fmt.Errorf("write spill file %s: %w", name, err)
	}
	return nil
}

func (e *Engine) voidReceipt(ctx context.Context, id, spill string) error {
	err := e.DB.InTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx,
			`UPDATE fs_receipts SET state = 'void', prior = NULL, prior_file = NULL, prior_sha256 = NULL WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("void receipt %s: %w", id, err)
	}
	if spill != "" {
		os.Remove(filepath.Join(e.SpillDir, spill))
	}
	return nil
}

func commitReceipt(ctx context.Context, tx *sql.Tx, id, undoes string, at int64) error {
	if _, err := tx.ExecContext(ctx,
		`UPDATE fs_receipts SET state = 'committed', committed_at = ? WHERE id = ?`, at, id); err != nil {
		return err
	}
	if undoes != "" {
		if _, err := tx.ExecContext(ctx,
			`UPDATE fs_receipts SET undone_at = ?, undone_by = ? WHERE id = ?`, at, id, undoes); err != nil {
			return err
		}
	}
	return nil
}

// newReceiptID returns "rcpt_" and 20 random base32 characters (100 bits).
func newReceiptID() string { return primitive.NewID("rcpt") }

func validReceiptID(id string) bool { return primitive.ValidID("rcpt", id) }

func nullIf(null bool, s string) sql.NullString { return sql.NullString{String: s, Valid: !null} }

func ptrIf(ok bool, s string) *string {
	if !ok {
		return nil
	}
	return &s
}
