package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestMigrationStoresPriorCopiesOnce migrates a version-10 database whose
// receipts keep identical inline prior content through 0012: the content
// moves into fs_priors once, and each receipt refers to it by SHA-256.
func TestMigrationStoresPriorCopiesOnce(t *testing.T) {
	ctx := context.Background()
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var upTo10 []Migration
	for _, m := range ms {
		if m.Version <= 10 {
			upTo10 = append(upTo10, m)
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
	if err := frozen.applyMigrations(ctx, upTo10); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO fs_receipts(id, route, op, path, existed_before, pre_sha256, post_sha256, prior, prior_size, state, created_at)
		 VALUES ('rcpt_1', 'r:o', 'write', 'f.txt', 1, 'sha-x', 'sha-y', X'78787878', 4, 'committed', 1)`,
		`INSERT INTO fs_receipts(id, route, op, path, existed_before, pre_sha256, post_sha256, prior, prior_size, state, created_at)
		 VALUES ('rcpt_2', 'r:o', 'write', 'f.txt', 1, 'sha-x', 'sha-y', X'78787878', 4, 'committed', 2)`,
		`INSERT INTO fs_receipts(id, route, op, path, existed_before, post_sha256, state, created_at)
		 VALUES ('rcpt_new', 'r:o', 'write', 'g.txt', 0, 'sha-z', 'committed', 3)`,
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
	var n int
	var data []byte
	if err := db.R.QueryRow(`SELECT COUNT(*), MAX(data) FROM fs_priors`).Scan(&n, &data); err != nil || n != 1 || string(data) != "xxxx" {
		t.Fatalf("fs_priors: %d rows, data %q (%v); want one row holding the content", n, data, err)
	}
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM fs_receipts WHERE prior_sha256 = 'sha-x' AND prior IS NULL`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d receipts refer to the shared copy (%v), want 2", n, err)
	}
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM fs_receipts WHERE id = 'rcpt_new' AND prior_sha256 IS NULL`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("a receipt of a new file got a prior reference: %v", err)
	}
}
