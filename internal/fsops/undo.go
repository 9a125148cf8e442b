package fsops

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// Undo of one receipt by its conversation (and by the operator, one
// change at a time, on the Changes page), and the receipt rows it reads.

// Undo reverts the change a receipt recorded: it restores the prior content,
// or removes the file if the receipt's operation created it. It conflicts
// unless the file's current hash is the receipt's post-hash (nobody changed
// it since), and when the receipt was already undone. The undo gets a
// receipt of its own, so it can be undone in turn.
//
// route is the calling conversation, and receipts belong to the
// conversation that made them: a receipt outside route's scope
// (primitive.RouteMatch, so anonymous requests share one scope) is
// ErrReceiptNotFound, word for word as for an id that never existed, and
// is looked up before anything else about it (its path included) can
// show. A receipt id can leak through a shared transcript; the scope makes
// a leaked id useless elsewhere. A receipt of the operator's undo or redo
// on the Changes page, though in the conversation's scope, is the
// operator's to undo: the conversation's undo of it is an
// *OperatorChangeError.
func (e *Engine) Undo(ctx context.Context, route string, in UndoInput) (UndoResult, error) {
	if len(in.ReceiptIDs) > 0 || in.ReceiptID == "" {
		return UndoResult{}, &InputError{Field: "receipt_id", Message: "give one receipt_id (UndoMany takes receipt_ids)"}
	}
	return e.undoOne(ctx, route, in.ReceiptID, operatorUndo{})
}

// operatorUndo marks an undo the operator made on the Changes page: its
// name and the batch ("Undo all", or one change, or a "Redo") it is part
// of. The zero value is a conversation's own undo.
type operatorUndo struct {
	name, batch string
}

// undoOne is Undo of one receipt id, by the conversation route or, with
// op set, by the operator for that conversation.
func (e *Engine) undoOne(ctx context.Context, route, id string, op operatorUndo) (UndoResult, error) {
	if !validReceiptID(id) {
		return UndoResult{}, &InputError{Field: "receipt_id", Message: fmt.Sprintf("%q is not a receipt id (rcpt_…)", id)}
	}
	orig, err := e.loadReceipt(ctx, route, id)
	if err != nil {
		return UndoResult{}, err
	}
	if op.name == "" && orig.operator.Valid {
		return UndoResult{}, &OperatorChangeError{ReceiptID: orig.id, Operator: orig.operator.String, Path: orig.path}
	}
	if orig.action != "" {
		return e.undoAction(ctx, route, orig, op)
	}
	abs, err := e.Roots.Resolve(orig.path)
	if err != nil {
		return UndoResult{}, err
	}
	fromBin := e.binCopyOf(orig)
	res, err := e.mutate(ctx, mutation{route: orig.route, op: "undo", path: abs, undoes: orig.id, operator: op.name, batch: op.batch,
		fromBin: fromBin,
		check: func(s snapshot) error {
			// Reload under the path lock: a concurrent undo may have won.
			cur, err := e.loadReceipt(ctx, route, orig.id)
			if err != nil {
				return err
			}
			conflict := func(reason, msg string) error {
				ce := &ConflictError{Path: abs, Reason: reason, Replacement: -1, ReceiptID: cur.id, Message: msg}
				if cur.post.Valid {
					ce.Expected = cur.post.String
				} else {
					ce.Expected = "absent"
				}
				if s.exists {
					ce.Actual = &s.sha
				}
				return ce
			}
			by, err := e.undoneNow(ctx, cur)
			if err != nil {
				return err
			}
			switch {
			case by != "":
				return conflict(ReasonAlreadyUndone, fmt.Sprintf("receipt %s was already undone by %s", cur.id, by))
			case cur.state != "committed":
				return conflict(ReasonIncomplete, fmt.Sprintf("receipt %s is %s: its change never completed, so there is nothing to undo", cur.id, cur.state))
			case cur.post.Valid != s.exists || s.exists && s.sha != cur.post.String:
				return conflict(ReasonChanged, "the file changed since that receipt; re-read it and write or patch it instead")
			}
			orig = cur
			return nil
		},
		removeFile: !orig.existed,
		changeReader: func(snapshot) (io.ReadCloser, error) {
			if fromBin != "" {
				return os.Open(fromBin)
			}
			return e.priorReader(ctx, orig)
		}})
	return UndoResult{MutationResult: res, UndoneReceiptID: orig.id}, err
}

// binCopyOf is the item in the trash that the undo of r can move back
// instead of writing r's kept copy, "" when there is none: r removed a
// file to the trash (the operator's undo of a file a chat created), the
// trash said where (bin_path), and the item there is still a file with
// the content r removed. A Redo then leaves no copy of the file in the
// trash. On Windows the Recycle Bin names its items itself; when
// Hearth cannot find the item there (trashItem gives ""), the undo
// writes the kept copy as before and the Recycle Bin keeps its own.
func (e *Engine) binCopyOf(r receipt) string {
	if r.post.Valid || !r.existed || !r.pre.Valid || r.binPath == "" || !inTrash(r.binPath) {
		return ""
	}
	info, err := lstatItem(r.binPath)
	if err != nil || !info.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(r.binPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil || hex.EncodeToString(h.Sum(nil)) != r.pre.String {
		return ""
	}
	return r.binPath
}

// receipt is one fs_receipts row, as undo needs it.
type receipt struct {
	id, route, path, state string
	existed                bool
	pre, post              sql.NullString
	prior                  []byte
	priorFile              sql.NullString
	undoneBy               sql.NullString
	// operator is set on the operator's undo or redo (Changes page).
	operator sql.NullString
	// The file operations' columns (fileops.go): action is "" for a
	// write, patch or undo of content.
	action, fromPath, binPath, replacedBin string
	isDir                                  bool
}

// loadReceipt loads receipt id as the conversation route sees it: a
// receipt outside route's scope (primitive.RouteMatch) is reported exactly
// like one that never existed, and so is its tombstone once pruned.
func (e *Engine) loadReceipt(ctx context.Context, route, id string) (receipt, error) {
	r := receipt{id: id}
	cond, arg := primitive.RouteMatch("route", route)
	err := e.DB.R.QueryRowContext(ctx,
		`SELECT route, path, state, existed_before, pre_sha256, post_sha256, coalesce(prior, p.data), prior_file, undone_by, operator,
		   COALESCE(action, ''), COALESCE(from_path, ''), COALESCE(bin_path, ''), COALESCE(replaced_bin, ''), is_dir
		 FROM fs_receipts LEFT JOIN fs_priors p ON p.sha256 = fs_receipts.prior_sha256
		 WHERE id = ? AND `+cond, id, arg).
		Scan(&r.route, &r.path, &r.state, &r.existed, &r.pre, &r.post, &r.prior, &r.priorFile, &r.undoneBy, &r.operator,
			&r.action, &r.fromPath, &r.binPath, &r.replacedBin, &r.isDir)
	if errors.Is(err, sql.ErrNoRows) {
		if xerr := e.expiredReceipt(ctx, route, id); xerr != nil {
			return receipt{}, xerr
		}
		return receipt{}, fmt.Errorf("receipt %s: %w", id, ErrReceiptNotFound)
	}
	if err != nil {
		return receipt{}, fmt.Errorf("load receipt %s: %w", id, err)
	}
	return r, nil
}

// priorReader opens the content a receipt's operation replaced.
func (e *Engine) priorReader(ctx context.Context, r receipt) (io.ReadCloser, error) {
	if r.priorFile.Valid {
		f, err := os.Open(filepath.Join(e.SpillDir, r.priorFile.String))
		if err != nil {
			return nil, fmt.Errorf("open undo copy of receipt %s: %w", r.id, err)
		}
		return f, nil
	}
	return readerAtCloser{bytes.NewReader(r.prior)}, nil
}
