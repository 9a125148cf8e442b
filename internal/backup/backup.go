// Package backup makes, verifies, lists, prunes and restores copies of
// Hearth's database, hearth.db.
//
// A backup is an online copy: SQLite's VACUUM INTO writes a consistent
// snapshot of the database from one read transaction, so a running Hearth
// keeps writing while it is made. The copy is then checked before it counts:
// PRAGMA integrity_check must answer ok, and the ledger in it must verify
// (every entry's chain link and hash, every tree hash, every checkpoint's
// signature), signed by this installation's key when that is known. Only then
// is it renamed into <data>/backups/ with a small JSON record beside it
// (the ".json" of the same name) saying when it was made, why, what it holds
// and the SHA-256 of its bytes. A backup without that record is not a backup
// and is never listed, restored by name or counted against backup_keep.
//
// Restore replaces hearth.db with a backup while no Hearth runs: it takes
// the instance lock (so Hearth cannot start meanwhile), verifies a private
// copy of the file as Make does, moves the current database (with its WAL)
// aside into backups/replaced-<time>/, and renames the copy into place.
package backup

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/atomicfile"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/store"
)

// DirName is the backups directory inside the data directory.
const DirName = "backups"

// Why a backup was made.
const (
	ReasonDaily     = "daily"
	ReasonMigration = "migration"
	ReasonManual    = "manual"
	// ReasonUpdate: made before Hearth replaced its program with a new
	// version (internal/update), and restored if the new one fails.
	ReasonUpdate = "update"
)

// DailyEvery is how old the newest backup may get before a running Hearth
// makes the next one.
const DailyEvery = 24 * time.Hour

// ledgerSchema is the schema version that created the ledger tables
// (migration 0002): a database at least this new must hold a ledger that
// verifies.
const ledgerSchema = 2

// nameTime formats a backup's time in its file name: UTC, fixed width, so
// that names sort in time order, and without ':' (Windows file names).
const nameTime = "20060102-150405.000Z"

// Info is the record kept beside a verified backup.
type Info struct {
	// File is the backup's file name in the backups directory.
	File   string    `json:"file"`
	Made   time.Time `json:"made"`
	Reason string    `json:"reason"`
	Size   int64     `json:"size"`
	SHA256 string    `json:"sha256"`
	// SchemaVersion is the database schema the backup has.
	SchemaVersion int `json:"schema_version"`
	// LedgerEntries were verified; CheckpointSize of them are signed.
	LedgerEntries  int64  `json:"ledger_entries"`
	CheckpointSize int64  `json:"checkpoint_size"`
	PublicKey      string `json:"public_key,omitempty"`
	// TookMS is how long making and verifying it took.
	TookMS int64 `json:"took_ms"`

	// Path is where the backup is (not stored).
	Path string `json:"-"`
}

// Options are a backup's inputs.
type Options struct {
	// Dir is the backups directory, <data>/backups.
	Dir string
	// Keep is how many verified backups to keep (backup_keep); older ones
	// are deleted after this one is made. 0 deletes nothing.
	Keep   int
	Reason string
	// VerifierKey is this installation's ledger verifier key: a backup
	// whose latest checkpoint another key signed is refused. "" accepts
	// the key recorded with each checkpoint.
	VerifierKey string
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Dir is the backups directory of dataDir.
func Dir(dataDir string) string { return filepath.Join(dataDir, DirName) }

// Make backs db up into opts.Dir, verifies the copy and prunes to
// opts.Keep. It reads through db's reader pool, so it never waits for or
// holds up Hearth's writer; db may be the live database of a running
// Hearth or one opened read-only (store.OpenReadOnly) by another process.
func Make(ctx context.Context, db *store.DB, opts Options) (Info, error) {
	return makeFrom(ctx, db.R, db.Path, opts)
}

// MakeFromFile is Make for the database file at path, of a Hearth that may
// be running in another process (hearth-tray backup): it reads the file
// through a read-only connection of its own, which changes nothing and
// migrates nothing.
func MakeFromFile(ctx context.Context, path string, opts Options) (Info, error) {
	if _, err := os.Stat(path); err != nil {
		return Info{}, fmt.Errorf("back up the database: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	// mode=ro, not query_only: VACUUM INTO writes only its target file,
	// which query_only would refuse too.
	q.Set("mode", "ro")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return Info{}, fmt.Errorf("back up the database %s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	return makeFrom(ctx, db, path, opts)
}

func makeFrom(ctx context.Context, src *sql.DB, srcPath string, opts Options) (Info, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	switch opts.Reason {
	case ReasonDaily, ReasonMigration, ReasonManual, ReasonUpdate:
	default:
		return Info{}, fmt.Errorf("back up the database: unknown reason %q", opts.Reason)
	}
	start := now()
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return Info{}, fmt.Errorf("back up the database: create %s: %w", opts.Dir, err)
	}
	tmp, err := tempName(opts.Dir, ".making-", ".db")
	if err != nil {
		return Info{}, fmt.Errorf("back up the database: %w", err)
	}
	defer os.Remove(tmp)
	if _, err := src.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		return Info{}, fmt.Errorf("back up the database %s: VACUUM INTO: %w", srcPath, err)
	}
	info, err := verifyFile(ctx, tmp, opts.VerifierKey)
	if err != nil {
		return Info{}, fmt.Errorf("back up the database %s: the copy does not verify: %w", srcPath, err)
	}
	if err := syncFile(tmp); err != nil {
		return Info{}, fmt.Errorf("back up the database: %w", err)
	}
	info.Made = start.UTC()
	info.Reason = opts.Reason
	final, err := freeName(opts.Dir, "hearth-"+info.Made.Format(nameTime)+"-"+opts.Reason)
	if err != nil {
		return Info{}, fmt.Errorf("back up the database: %w", err)
	}
	info.File = filepath.Base(final)
	info.Path = final
	info.TookMS = now().Sub(start).Milliseconds()
	if err := os.Rename(tmp, final); err != nil {
		return Info{}, fmt.Errorf("back up the database: %w", err)
	}
	if err := writeRecord(final, info); err != nil {
		os.Remove(final)
		return Info{}, fmt.Errorf("back up the database: %w", err)
	}
	if opts.Keep > 0 {
		if err := Prune(opts.Dir, opts.Keep, now()); err != nil {
			return info, fmt.Errorf("backup %s made, but pruning older ones failed: %w", info.File, err)
		}
	}
	return info, nil
}

// Verify checks the database file at path as Make checks its copies:
// SQLite's integrity check, the schema version (not newer than this
// Hearth), and the ledger, whose latest checkpoint must be signed by
// verifierKey when that is not "". It opens the file read-only. The
// returned Info has the file's size, hash and contents filled in.
func Verify(ctx context.Context, path, verifierKey string) (Info, error) {
	return verifyFile(ctx, path, verifierKey)
}

func verifyFile(ctx context.Context, path, verifierKey string) (Info, error) {
	info := Info{Path: path, File: filepath.Base(path)}
	sum, size, err := hashFile(path)
	if err != nil {
		return info, err
	}
	info.SHA256, info.Size = sum, size
	if err := checkHeader(path); err != nil {
		return info, err
	}
	db, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		return info, err
	}
	defer db.Close()
	problems, err := db.Check(ctx, false, 10)
	if err != nil {
		return info, fmt.Errorf("integrity check: %w", err)
	}
	if len(problems) > 0 {
		return info, fmt.Errorf("integrity check failed: %s", strings.Join(problems, "; "))
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return info, fmt.Errorf("read schema version: %w", err)
	}
	newest, err := store.NewestSchemaVersion()
	if err != nil {
		return info, err
	}
	if v > newest {
		return info, fmt.Errorf("schema version %d is newer than this Hearth knows (%d)", v, newest)
	}
	info.SchemaVersion = v
	if v < ledgerSchema {
		return info, nil
	}
	rep, err := ledger.VerifyDB(ctx, db)
	if err != nil {
		return info, fmt.Errorf("ledger verification failed: %w", err)
	}
	if verifierKey != "" && rep.PublicKey != "" && rep.PublicKey != verifierKey {
		return info, fmt.Errorf("the ledger's latest checkpoint is signed by %s, not by this installation's key %s", rep.PublicKey, verifierKey)
	}
	info.LedgerEntries, info.CheckpointSize, info.PublicKey = rep.Entries, rep.CheckpointSize, rep.PublicKey
	return info, nil
}

// sqliteMagic opens every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// checkHeader refuses a file that is not an SQLite database before SQLite
// is asked to open it (it would call an empty file an empty database).
func checkHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, len(sqliteMagic))
	if _, err := io.ReadFull(f, b); err != nil || string(b) != sqliteMagic {
		return fmt.Errorf("%s is not an SQLite database", path)
	}
	return nil
}

// List returns the verified backups in dir, newest first: each .db file
// with a readable record beside it. A missing directory is no backups.
func List(dir string) ([]Info, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list backups: %w", err)
	}
	var out []Info
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, "hearth-") || !strings.HasSuffix(name, ".db") {
			continue
		}
		info, err := readRecord(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Made.Equal(out[j].Made) {
			return out[i].Made.After(out[j].Made)
		}
		return out[i].File > out[j].File
	})
	return out, nil
}

// Newest returns the newest verified backup in dir; ok is false when there
// is none.
func Newest(dir string) (info Info, ok bool, err error) {
	all, err := List(dir)
	if err != nil || len(all) == 0 {
		return Info{}, false, err
	}
	return all[0], true, nil
}

// NewestIntact returns the newest verified backup in dir whose bytes are
// still those that were verified (Recheck): the one to restore when the
// database is damaged. ok is false when there is none.
func NewestIntact(dir string) (info Info, ok bool, err error) {
	all, err := List(dir)
	if err != nil {
		return Info{}, false, err
	}
	for _, info := range all {
		if Recheck(info) == nil {
			return info, true, nil
		}
	}
	return Info{}, false, nil
}

// Recheck confirms that a listed backup's bytes are still those that were
// verified (the SHA-256 in its record), without opening it as a database.
func Recheck(info Info) error {
	sum, size, err := hashFile(info.Path)
	if err != nil {
		return err
	}
	if sum != info.SHA256 || size != info.Size {
		return fmt.Errorf("backup %s has changed since it was verified", info.File)
	}
	return nil
}

// staleAfter is how old a half-made backup (.making-*, left by a crash)
// must be before Prune deletes it: younger ones may be in progress.
const staleAfter = 24 * time.Hour

// Prune deletes all but the keep newest verified backups in dir (each
// with its record), and half-made ones older than a day. The copies that
// Restore moved aside (replaced-*) are the user's data and never pruned.
func Prune(dir string, keep int, now time.Time) error {
	if keep < 1 {
		return fmt.Errorf("prune backups: keep %d must be at least 1", keep)
	}
	all, err := List(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, info := range all[min(keep, len(all)):] {
		for _, p := range []string{info.Path + ".json", info.Path} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".making-") {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > staleAfter {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Due reports whether a daily backup is due at now: none was made yet, or
// the newest is DailyEvery old (or from the future: a clock set back).
func Due(dir string, now time.Time) (bool, error) {
	info, ok, err := Newest(dir)
	if err != nil || !ok {
		return err == nil, err
	}
	age := now.Sub(info.Made)
	return age >= DailyEvery || age < -time.Hour, nil
}

func writeRecord(dbPath string, info Info) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := atomicfile.WriteWith(dbPath+".json", 0o600, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return fmt.Errorf("write backup record: %w", err)
	}
	return nil
}

// readRecord reads the record beside the backup at dbPath; it must name
// that file.
func readRecord(dbPath string) (Info, error) {
	b, err := os.ReadFile(dbPath + ".json")
	if err != nil {
		return Info{}, err
	}
	var info Info
	if err := json.Unmarshal(b, &info); err != nil {
		return Info{}, fmt.Errorf("backup record %s.json: %w", dbPath, err)
	}
	if info.File != filepath.Base(dbPath) || info.SHA256 == "" || info.Made.IsZero() {
		return Info{}, fmt.Errorf("backup record %s.json does not describe %s", dbPath, filepath.Base(dbPath))
	}
	info.Path = dbPath
	return info, nil
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("flush %s to disk: %w", path, err)
	}
	return nil
}

// tempName is a fresh, not yet existing file name in dir.
func tempName(dir, prefix, suffix string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return filepath.Join(dir, prefix+hex.EncodeToString(b[:])+suffix), nil
}

// freeName is dir/base.db, or dir/base-2.db… when a backup made in the
// same millisecond has that name.
func freeName(dir, base string) (string, error) {
	for i := 1; i < 100; i++ {
		name := base + ".db"
		if i > 1 {
			name = fmt.Sprintf("%s-%d.db", base, i)
		}
		p := filepath.Join(dir, name)
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
	}
	return "", fmt.Errorf("no free backup name for %s in %s", base, dir)
}
