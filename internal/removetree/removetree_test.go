package removetree_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-dev/hearth/internal/removetree"
)

// tree makes a directory with nested folders, a read-only file and names
// with accents and spaces, as a data directory holds.
func tree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Zoë Ünal data")
	deep := filepath.Join(dir, "a", "b b", "ç")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(dir, "config.json"), filepath.Join(deep, "notes é.txt"), filepath.Join(dir, "a", "ro.txt")} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "a", "ro.txt"), 0o400); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestByEntryRemovesATree: the entry-by-entry removal, which All falls
// back to where os.RemoveAll fails, removes every file and folder,
// read-only ones included.
func TestByEntryRemovesATree(t *testing.T) {
	dir := tree(t)
	if err := removetree.ByEntry(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after ByEntry, %s: %v (want gone)", dir, err)
	}
}

// TestAll: All removes a tree, and a missing directory is not an error.
func TestAll(t *testing.T) {
	dir := tree(t)
	if err := removetree.All(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after All, %s: %v (want gone)", dir, err)
	}
	if err := removetree.All(dir); err != nil {
		t.Fatalf("All of a missing directory: %v", err)
	}
}
