package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestMigrationKeepsReceiptOwners migrates a version-7 database holding a
// receipt and a pruned receipt's tombstone through 0008: the receipt keeps
// the route it was made by (its owner from then on), and the tombstone,
// whose owner was never kept, gets route NULL (it matches no scope).
func TestMigrationKeepsReceiptOwners(t *testing.T) {
	ctx := context.Background()
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var upTo7 []Migration
	for _, m := range ms {
		if m.Version <= 7 {
			upTo7 = append(upTo7, m)
		}
	}
	path := filepath.Join(t.TempDir(), "old.db")
	w, err := openPool(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := openPool(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	frozen := &DB{W: w, R: r, Path: path}
	if err := frozen.applyMigrations(ctx, upTo7); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO fs_receipts(id, route, op, path, existed_before, post_sha256, state, created_at)
		 VALUES ('rcpt_kept', 'r:owner', 'write', 'f.txt', 0, 'abc', 'committed', 1)`,
		`INSERT INTO fs_receipts_pruned(id, created_at, pruned_at) VALUES ('rcpt_gone', 1, 2)`,
	} {
		if _, err := frozen.W.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	frozen.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var route string
	if err := db.R.QueryRow(`SELECT route FROM fs_receipts WHERE id = 'rcpt_kept'`).Scan(&route); err != nil || route != "r:owner" {
		t.Fatalf("receipt route %q (%v), want its creator's", route, err)
	}
	var owner sql.NullString
	if err := db.R.QueryRow(`SELECT route FROM fs_receipts_pruned WHERE id = 'rcpt_gone'`).Scan(&owner); err != nil || owner.Valid {
		t.Fatalf("old tombstone route %v (%v), want NULL", owner, err)
	}
	if _, err := db.W.Exec(`INSERT INTO fs_receipts_pruned(id, route, created_at, pruned_at) VALUES ('rcpt_new', 'r:owner', 1, 2)`); err != nil {
		t.Fatalf("a tombstone with its owner: %v", err)
	}
}
