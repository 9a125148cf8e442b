//go:build !windows

package fsops

import (
	"errors"
	"io/fs"
	"os"
	"testing"
)

// The rename of a file system that cannot be told "never replace" (the
// fallback renameNoReplace takes on NFS, CIFS, FUSE) never replaces a
// file or a folder either, and still renames into a free name.
func TestRenameClaimedNeverReplaces(t *testing.T) {
	env := newTestEngine(t)
	writeFile(t, env.path("a.txt"), "a")
	writeFile(t, env.path("b.txt"), "b")
	if err := renameClaimed(env.path("a.txt"), env.path("b.txt")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("file onto a file: err %v, want fs.ErrExist", err)
	}
	if mustRead(t, env.path("a.txt")) != "a" || mustRead(t, env.path("b.txt")) != "b" {
		t.Fatal("a file was replaced")
	}
	writeFile(t, env.path("d", "in.txt"), "d")
	writeFile(t, env.path("e", "in.txt"), "e")
	if err := os.MkdirAll(env.path("empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"e", "empty", "b.txt"} {
		if err := renameClaimed(env.path("d"), env.path(to)); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("folder onto %s: err %v, want fs.ErrExist", to, err)
		}
	}
	if mustRead(t, env.path("e", "in.txt")) != "e" || !exists(env.path("empty")) || mustRead(t, env.path("d", "in.txt")) != "d" {
		t.Fatal("a folder was replaced")
	}
	if err := renameClaimed(env.path("a.txt"), env.path("c.txt")); err != nil || mustRead(t, env.path("c.txt")) != "a" || exists(env.path("a.txt")) {
		t.Fatalf("file to a free name: %v", err)
	}
	if err := renameClaimed(env.path("d"), env.path("f")); err != nil || mustRead(t, env.path("f", "in.txt")) != "d" || exists(env.path("d")) {
		t.Fatalf("folder to a free name: %v", err)
	}
}
