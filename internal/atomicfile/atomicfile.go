// Package atomicfile replaces a file's content so that a reader, or a crash
// at any point, sees the old content or the new and never a mix, retrying
// while another program briefly holds the file. Every file Hearth replaces
// whole goes through it: the fs tool's engine (internal/fsops), config.json,
// the tray's control file, autostart's copy of the program, the secrets,
// the instance file, ledger exports, backup records, the updater's and the
// tunnel's state files. TestRenamesGoThroughAtomicfile fails on a new
// os.Rename elsewhere.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TempPrefix starts the name of every temporary file Write makes. The fs
// tool refuses paths with this prefix and hides them from searches, so a
// half-written file is never read or written through Hearth.
const TempPrefix = ".hearth-tmp-"

// ErrNotDurable is wrapped by Write's error when the new content is in
// place but the directory could not be synced, so the rename might not
// survive a power loss. The replace itself has happened.
var ErrNotDurable = errors.New("replaced, but the directory could not be synced")

// Replacer does atomic replaces. Its zero value is ready to use, with the
// defaults documented on each field; tests inject Rename and Sleep.
type Replacer struct {
	// Rename renames a file over another. When nil it is os.Rename, or on
	// Windows MoveFileEx with MOVEFILE_REPLACE_EXISTING and
	// MOVEFILE_WRITE_THROUGH, so the rename is on disk when it returns.
	Rename func(oldpath, newpath string) error
	// Remove removes a file; os.Remove when nil.
	Remove func(name string) error
	// Sleep waits between attempts; time.Sleep when nil.
	Sleep func(time.Duration)
	// MaxAttempts bounds the attempts at a rename or remove; 8 when zero.
	MaxAttempts int
	// BaseDelay is the first backoff, doubled each retry up to MaxDelay;
	// 10 ms when zero.
	BaseDelay time.Duration
	// MaxDelay caps one backoff; 500 ms when zero.
	MaxDelay time.Duration
	// Private gives the file perm even when it exists with another mode
	// (a secret stays private whatever mode someone gave its file); by
	// default an existing file keeps its mode.
	Private bool
}

// WriteWith replaces path with what fill writes, through the zero
// Replacer (see Replacer.Write). A new file gets perm; an existing one
// keeps its mode. The content is in place when it returns nil; a folder
// that could not be synced afterwards (ErrNotDurable) is not an error
// here, since the replace happened and a power cut can at worst bring the
// previous whole content back.
func WriteWith(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	return Replacer{}.WriteWith(path, perm, fill)
}

// WriteWith is the package's WriteWith with r's settings.
func (r Replacer) WriteWith(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	_, err := r.write(path, fill, perm)
	if errors.Is(err, ErrNotDurable) {
		return nil
	}
	return err
}

// Write replaces path with data using the zero Replacer.
func Write(path string, data []byte, perm fs.FileMode) (attempts int, err error) {
	return Replacer{}.Write(path, data, perm)
}

// Write replaces path with data so that a reader, or a crash at any
// point, sees either the old content or the new, never a mix: the data goes
// to a temporary file in the same directory (named .hearth-tmp-*), which is
// synced and then renamed over path, and the directory is synced (on
// Windows, where directories cannot be synced, the rename is made with
// MoveFileEx's MOVEFILE_WRITE_THROUGH instead). A rename refused for a
// transient reason (another process holding the file: EPERM/EACCES/EBUSY,
// or Windows access-denied, sharing and lock violations) is retried with
// bounded exponential backoff. attempts counts the renames tried. On
// failure the temporary file is removed and path is unchanged. A new file
// gets perm; an existing one keeps its mode.
func (r Replacer) Write(path string, data []byte, perm fs.FileMode) (attempts int, err error) {
	return r.write(path, func(w io.Writer) error { _, err := w.Write(data); return err }, perm)
}

// WriteFrom is Write with the content read from src, so large
// content need not be held in memory.
func (r Replacer) WriteFrom(path string, src io.Reader, perm fs.FileMode) (attempts int, err error) {
	return r.write(path, func(w io.Writer) error { _, err := io.Copy(w, src); return err }, perm)
}

func (r Replacer) write(path string, fill func(io.Writer) error, perm fs.FileMode) (attempts int, err error) {
	if info, err := os.Stat(path); err == nil && !r.Private {
		perm = info.Mode().Perm()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, TempPrefix+"*")
	if err != nil {
		return 0, fmt.Errorf("create temporary file in %s: %w", dir, err)
	}
	tmp := f.Name()
	cleanup := func(cause error) (int, error) {
		if rerr := os.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			cause = errors.Join(cause, fmt.Errorf("remove temporary file: %w", rerr))
		}
		return attempts, cause
	}
	if err := fill(f); err != nil {
		f.Close()
		return cleanup(fmt.Errorf("write temporary file for %s: %w", path, err))
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return cleanup(fmt.Errorf("set mode of temporary file for %s: %w", path, err))
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return cleanup(fmt.Errorf("sync temporary file for %s: %w", path, err))
	}
	if err := f.Close(); err != nil {
		return cleanup(fmt.Errorf("close temporary file for %s: %w", path, err))
	}
	rename := r.Rename
	if rename == nil {
		rename = replaceFile
	}
	attempts, err = r.retry(func() error { return rename(tmp, path) })
	if err != nil {
		return cleanup(fmt.Errorf("replace %s (%d attempts): %w", path, attempts, err))
	}
	if err := syncDir(dir); err != nil {
		return attempts, fmt.Errorf("%w: %s: %w", ErrNotDurable, dir, err)
	}
	return attempts, nil
}

// RemoveFile removes path, retrying transient failures like Write, and
// syncs its directory. It is how undo deletes a file that a write created.
func (r Replacer) RemoveFile(path string) (attempts int, err error) {
	remove := r.Remove
	if remove == nil {
		remove = os.Remove
	}
	attempts, err = r.retry(func() error { return remove(path) })
	if err != nil {
		return attempts, fmt.Errorf("remove %s (%d attempts): %w", path, attempts, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return attempts, fmt.Errorf("%w: %s: %w", ErrNotDurable, filepath.Dir(path), err)
	}
	return attempts, nil
}

// Retry runs op with the retries of a held file (IsTransient), as Write
// and RemoveFile do: the fs file operations rename and trash through it.
func (r Replacer) Retry(op func() error) (attempts int, err error) { return r.retry(op) }

// retry runs op until it succeeds, fails for a reason that is not
// transient, or has been tried MaxAttempts times.
func (r Replacer) retry(op func() error) (attempts int, err error) {
	maxAttempts := r.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = 8
	}
	delay := r.BaseDelay
	if delay <= 0 {
		delay = 10 * time.Millisecond
	}
	maxDelay := r.MaxDelay
	if maxDelay <= 0 {
		maxDelay = 500 * time.Millisecond
	}
	sleep := r.Sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	for attempts = 1; ; attempts++ {
		err = op()
		if err == nil || !IsTransient(err) || attempts >= maxAttempts {
			return attempts, err
		}
		sleep(delay)
		delay = min(delay*2, maxDelay)
	}
}

// IsTransient reports whether a rename or remove failed because
// another process briefly holds the file (an antivirus scanner, an indexer,
// an editor), which is worth retrying.
func IsTransient(err error) bool {
	for _, errno := range TransientErrnos() {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// CleanStaleTemps removes the .hearth-tmp-* files a crash left in dir and
// returns how many it removed. It must not run while a write into dir is in
// flight; Engine.Recover calls it at start-up. A missing dir is not an error.
func CleanStaleTemps(dir string) (removed int, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, fmt.Errorf("clean temporary files in %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), TempPrefix) || !e.Type().IsRegular() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("clean temporary files in %s: %w", dir, errors.Join(errs...))
	}
	return removed, nil
}
