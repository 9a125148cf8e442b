package fsops

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRealPrefix: a path is resolved through a link as far as it exists,
// the part that does not exist yet kept as written (governance resolves
// the persistence locations with it; a Startup folder reached through a
// link is the folder itself).
func TestRealPrefix(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if _, err := os.Lstat(link); err != nil {
		// Wine 8 answers Symlink without an error but makes no link.
		t.Skipf("the symlink made is not there: %v", err)
	}
	want, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	for in, out := range map[string]string{
		filepath.Join(link, "a", "b.txt"): filepath.Join(want, "a", "b.txt"),
		link:                              want,
		filepath.Join(real, "x"):          filepath.Join(want, "x"),
	} {
		if got := RealPrefix(in); got != out {
			t.Errorf("RealPrefix(%s) = %s, want %s", in, got, out)
		}
	}
}
