package fsops

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestEvalExistingMatchesEvalSymlinks: on Linux a path without links is
// answered by one openat2 (linkFree), and every path gets the answer
// filepath.EvalSymlinks gives: plain paths, relative and absolute links in
// the middle and at the end, links to links and to directories, a FIFO
// (which must not block); a missing path, a path through a file and a link
// loop fail as EvalSymlinks fails.
func TestEvalExistingMatchesEvalSymlinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "real", "sub", "f.txt"), []byte("x"), 0o640))
	must(syscall.Mkfifo(filepath.Join(dir, "real", "fifo"), 0o600))
	must(os.Symlink("real", filepath.Join(dir, "rel")))
	must(os.Symlink(filepath.Join(dir, "real", "sub"), filepath.Join(dir, "abs")))
	must(os.Symlink("sub/f.txt", filepath.Join(dir, "real", "tofile")))
	must(os.Symlink("rel", filepath.Join(dir, "chain")))
	must(os.Symlink("loop2", filepath.Join(dir, "loop1")))
	must(os.Symlink("loop1", filepath.Join(dir, "loop2")))

	if !linkFree(dir) {
		t.Fatalf("openat2 does not answer here (noOpenat2 %v): the link-free path is never taken", noOpenat2.Load())
	}
	for _, tc := range []struct {
		path     string
		linkFree bool
	}{
		{dir, true},
		{"/", true},
		{filepath.Join(dir, "real"), true},
		{filepath.Join(dir, "real", "sub", "f.txt"), true},
		{filepath.Join(dir, "real", "fifo"), true},
		{filepath.Join(dir, "rel"), false},
		{filepath.Join(dir, "rel", "sub", "f.txt"), false},
		{filepath.Join(dir, "abs", "f.txt"), false},
		{filepath.Join(dir, "real", "tofile"), false},
		{filepath.Join(dir, "chain", "tofile"), false},
	} {
		if got := linkFree(tc.path); got != tc.linkFree {
			t.Errorf("linkFree(%s) = %v, want %v", tc.path, got, tc.linkFree)
		}
		want, err := filepath.EvalSymlinks(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := evalExisting(tc.path); err != nil || got != want {
			t.Errorf("evalExisting(%s) = %s, %v; EvalSymlinks %s", tc.path, got, err, want)
		}
	}
	for _, tc := range []struct {
		path     string
		notExist bool
	}{
		{filepath.Join(dir, "missing"), true},
		{filepath.Join(dir, "real", "missing", "deeper"), true},
		{filepath.Join(dir, "rel", "missing"), true},
		{filepath.Join(dir, "real", "sub", "f.txt", "child"), false},
		{filepath.Join(dir, "loop1"), false},
	} {
		if linkFree(tc.path) {
			t.Errorf("linkFree(%s): true for a path that does not resolve", tc.path)
		}
		_, wantErr := filepath.EvalSymlinks(tc.path)
		_, err := evalExisting(tc.path)
		if err == nil || wantErr == nil || err.Error() != wantErr.Error() || errors.Is(err, fs.ErrNotExist) != tc.notExist {
			t.Errorf("evalExisting(%s): %v; EvalSymlinks %v; want not exist %v", tc.path, err, wantErr, tc.notExist)
		}
	}
}
