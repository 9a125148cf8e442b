package selftest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// The file system checks run the fs tool of the temporary Hearth, whose
// one root is the run's files directory, against links the run makes
// inside that root pointing at a directory beside it.

// secretName is a file outside the root that no fs call may reach.
const secretName = "outside-secret.txt"

// escapeChecks calls fs through the link at link (inside the root, leading
// outside) and requires every call to be refused as outside the roots,
// with nothing written outside.
func (r *run) escapeChecks(ctx context.Context, link, kind string) (string, error) {
	if err := os.WriteFile(filepath.Join(r.outside, secretName), []byte("not for the model"), 0o600); err != nil {
		return "", err
	}
	calls := []map[string]any{
		{"operation": "read", "path": filepath.Join(link, secretName)},
		{"operation": "list", "path": link},
		{"operation": "stat", "path": filepath.Join(link, secretName)},
		{"operation": "write", "path": filepath.Join(link, "planted.txt"), "data": "escaped"},
	}
	var rules []string
	for _, args := range calls {
		res, err := r.hearth.callSettled(ctx, "fs", args)
		if err != nil {
			return "", err
		}
		if res.Code() != "blocked/outside_roots" {
			return "", fmt.Errorf("fs.%s through the %s answered %s, want blocked/outside_roots: %s", args["operation"], kind, res.Code(), res.Brief())
		}
		rules = append(rules, res.Str("error.details.rule"))
	}
	if _, err := os.Stat(filepath.Join(r.outside, "planted.txt")); !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("fs.write through the %s created a file outside the root (%v)", kind, err)
	}
	return fmt.Sprintf("fs refused read, list, stat and write through a %s leading out of the root (rules %s); nothing was written outside", kind, strings.Join(uniq(rules), ", ")), nil
}

func uniq(s []string) []string {
	var out []string
	for _, v := range s {
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// checkSymlink makes a directory symbolic link in the root to the outside
// directory. Windows lets a user make one only with Developer Mode or the
// SeCreateSymbolicLinkPrivilege; without either the check is skipped.
func (r *run) checkSymlink(ctx context.Context) (string, error) {
	link := filepath.Join(r.root, "symlink-out")
	if err := os.Symlink(r.outside, link); err != nil {
		if symlinkNotAllowed(err) {
			return "", skip("this user may not make symbolic links (Windows needs Developer Mode or the SeCreateSymbolicLinkPrivilege): %v", err)
		}
		return "", fmt.Errorf("make a directory symlink: %w", err)
	}
	if _, err := os.Stat(filepath.Join(link, ".")); errors.Is(err, os.ErrNotExist) {
		// Wine 8: Symlink answers success, but the link cannot be
		// followed (or found) afterwards.
		return "", skip("this system said it made the symbolic link, but it cannot be followed afterwards (%v)", err)
	} else if err != nil {
		return "", fmt.Errorf("the symlink was made but does not lead to its target: %w", err)
	}
	return r.escapeChecks(ctx, link, "directory symlink")
}

// checkJunction makes a junction (an NTFS mount point, which any user may
// make) in the root to the outside directory.
func (r *run) checkJunction(ctx context.Context) (string, error) {
	link := filepath.Join(r.root, "junction-out")
	if err := makeJunction(link, r.outside); err != nil {
		var se *SkipError
		if errors.As(err, &se) {
			return "", err
		}
		return "", fmt.Errorf("make a junction: %w", err)
	}
	if _, err := os.Stat(filepath.Join(link, secretName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("the junction was made but cannot be traversed: %w", err)
	}
	return r.escapeChecks(ctx, link, "junction")
}

// longPathMin is how long the long-path check's file path is at least:
// past Windows' MAX_PATH of 260.
const longPathMin = 300

// checkLongPath writes, replaces, reads and stats a file whose path is
// longer than MAX_PATH through the fs tool.
func (r *run) checkLongPath(ctx context.Context) (string, error) {
	dir := r.root
	for len(dir) < longPathMin {
		dir = filepath.Join(dir, strings.Repeat("d", 40))
	}
	path := filepath.Join(dir, "long-path.txt")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("make a directory %d characters deep: %w", len(dir), err)
	}
	// The fs tool asks the system for a path's final form; a system that
	// cannot give it past MAX_PATH (Wine) cannot run this check.
	if err := finalPathProbe(dir); err != nil {
		return "", skip("this system cannot name a directory deeper than MAX_PATH by its handle (%v)", err)
	}
	var attempts float64
	for _, content := range []string{"first", "second"} {
		res, err := r.hearth.callSettled(ctx, "fs", map[string]any{"operation": "write", "path": path, "data": content})
		if err != nil {
			return "", err
		}
		if res.State() != "completed" {
			return "", fmt.Errorf("fs.write of a %d-character path: %s", len(path), res.Brief())
		}
		attempts = res.Num("result.replace_attempts")
	}
	res, err := r.hearth.callSettled(ctx, "fs", map[string]any{"operation": "read", "path": path})
	if err != nil {
		return "", err
	}
	if res.State() != "completed" || res.Str("result.data") != "second" {
		return "", fmt.Errorf("fs.read of the long path: %s", res.Brief())
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "second" {
		return "", fmt.Errorf("the file on disk after the replace: %q, %v", b, err)
	}
	return fmt.Sprintf("fs wrote, replaced (%v rename attempt(s)) and read back a file at a %d-character path (MAX_PATH is 260)", attempts, len(path)), nil
}

// checkHeldOpen replaces a file that another process (the hold child)
// holds open without FILE_SHARE_DELETE, as an editor or a scanner does:
// through the fs tool while the holder keeps it (the replace must fail
// cleanly, leaving the old content and no temporary file), then with the
// holder letting go during the retries (the replace must then succeed
// after more than one attempt).
func (r *run) checkHeldOpen(ctx context.Context) (string, error) {
	if !heldOpenBlocksRename {
		return "", skip("on this system a rename replaces a file other processes hold open; there is no sharing violation to prove")
	}
	path := filepath.Join(r.root, "held.txt")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		return "", err
	}
	holder, err := r.hold(path)
	if err != nil {
		return "", err
	}
	res, err := r.hearth.callSettled(ctx, "fs", map[string]any{"operation": "write", "path": path, "data": "new"})
	if err != nil {
		holder.stop()
		return "", err
	}
	if res.State() == "completed" {
		holder.stop()
		return "", skip("this file system let a file held open without FILE_SHARE_DELETE be replaced, so the retry cannot be exercised here")
	}
	b, _ := os.ReadFile(path)
	if string(b) != "old" {
		holder.stop()
		return "", fmt.Errorf("a failed replace changed the file to %q", b)
	}
	if temps, _ := filepath.Glob(filepath.Join(r.root, ".hearth-tmp-*")); len(temps) > 0 {
		holder.stop()
		return "", fmt.Errorf("a failed replace left %d temporary file(s)", len(temps))
	}
	refused := res.Code()
	released := false
	var releaseErr error
	rep := atomicfile.Replacer{Sleep: func(time.Duration) {
		if !released {
			released = true
			releaseErr = holder.stop()
		}
	}}
	attempts, err := rep.Write(path, []byte("new"), 0o600)
	if !released {
		holder.stop()
	}
	if releaseErr != nil {
		return "", releaseErr
	}
	if err != nil {
		return "", fmt.Errorf("replace after the holder let go: %w", err)
	}
	if attempts < 2 {
		return "", fmt.Errorf("the replace took %d attempt while the file was held; want a retry", attempts)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		return "", fmt.Errorf("content after the replace: %q", b)
	}
	return fmt.Sprintf("while another process held the file, fs.write answered %s and left it whole; when the holder let go mid-retry the replace succeeded on attempt %d", refused, attempts), nil
}

// hold starts the hold child on path and waits until it holds it.
func (r *run) hold(path string) (*childProc, error) {
	c, err := startChild(r.exe, "hold", path)
	if err != nil {
		return nil, err
	}
	r.onFinish("the file-holding process", c.stop)
	line, err := c.line()
	if err != nil {
		return nil, err
	}
	if string(line) != "held" {
		return nil, fmt.Errorf("the holding process: %s", line)
	}
	return c, nil
}
