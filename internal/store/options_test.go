package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// frozenAt makes a database at path migrated only to the first n migrations.
func frozenAt(t *testing.T, path string, n int) {
	t.Helper()
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	w, err := openPool(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := openPool(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	db := &DB{W: w, R: r, Path: path}
	if err := db.applyMigrations(context.Background(), ms[:n]); err != nil {
		t.Fatal(err)
	}
	db.Close()
}

func TestBeforeMigrateRunsOnlyBeforeAMigration(t *testing.T) {
	ctx := context.Background()
	newest, err := NewestSchemaVersion()
	if err != nil {
		t.Fatal(err)
	}
	type call struct{ from, to, seen int }
	var calls []call
	hook := BeforeMigrate(func(ctx context.Context, db *DB, from, to int) error {
		v, err := db.SchemaVersion(ctx)
		if err != nil {
			return err
		}
		calls = append(calls, call{from, to, v})
		return nil
	})

	// A new database: nothing to protect.
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	db, err := Open(ctx, fresh, hook)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if len(calls) != 0 {
		t.Fatalf("a new database called the hook: %+v", calls)
	}

	old := filepath.Join(t.TempDir(), "old.db")
	frozenAt(t, old, 3)
	db, err = Open(ctx, old, hook)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if len(calls) != 1 || calls[0] != (call{3, newest, 3}) {
		t.Fatalf("hook calls = %+v, want one from 3 to %d seeing version 3", calls, newest)
	}
	// Current now: no second call.
	db, err = Open(ctx, old, hook)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if len(calls) != 1 {
		t.Fatalf("a current database called the hook again: %+v", calls)
	}
}

func TestBeforeMigrateErrorLeavesTheDatabaseUnmigrated(t *testing.T) {
	ctx := context.Background()
	old := filepath.Join(t.TempDir(), "old.db")
	frozenAt(t, old, 2)
	refused := errors.New("no backup")
	_, err := Open(ctx, old, BeforeMigrate(func(context.Context, *DB, int, int) error { return refused }))
	if !errors.Is(err, refused) {
		t.Fatalf("Open = %v, want the hook's error", err)
	}
	ro, err := OpenReadOnly(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if v, err := ro.SchemaVersion(ctx); err != nil || v != 2 {
		t.Fatalf("schema version after a refused hook = %d, %v; want 2", v, err)
	}
}
