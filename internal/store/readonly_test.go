package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenReadOnly: a missing database is not created; an existing one is
// read beside an open read-write Hearth database, at its schema version
// (no migration), and refuses writes.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "hearth.db")
	if _, err := OpenReadOnly(ctx, file); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing database: %v", err)
	}
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenReadOnly created %s", file)
	}
	rw, err := Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	ro, err := OpenReadOnly(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	have, err := ro.SchemaVersion(ctx)
	want, werr := NewestSchemaVersion()
	if err != nil || werr != nil || have != want || want == 0 {
		t.Fatalf("schema version %d (%v), newest %d (%v)", have, err, want, werr)
	}
	if _, err := ro.W.ExecContext(ctx, "PRAGMA user_version = 1"); err == nil {
		t.Fatal("a read-only database accepted a write")
	}
	if v, _ := rw.SchemaVersion(ctx); v != want {
		t.Fatalf("schema version changed to %d", v)
	}
}
