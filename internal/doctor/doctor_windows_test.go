package doctor

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDirWritable: a directory this user may write passes and nothing is
// created in it; a missing directory fails.
func TestDirWritable(t *testing.T) {
	dir := t.TempDir()
	if err := dirWritable(dir); err != nil {
		t.Fatalf("dirWritable(temp dir): %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("dirWritable created %s", entries[0].Name())
	}
	if err := dirWritable(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("dirWritable accepted a missing directory")
	}
}
