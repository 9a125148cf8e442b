// Package fsopstest reads and writes the fs tool's receipts for other
// packages' tests, so that they age a receipt or check it is kept without
// naming the receipts' table or its columns (internal/fsops owns it:
// docs/ARCHITECTURE.md, "Who owns which table").
package fsopstest

import (
	"context"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/store/storetest"
)

// Backdate moves the creation time of receipt id, and of every receipt
// made before it, to at (unix milliseconds), as though they had been made
// that long ago; the receipts made after it keep their times.
func Backdate(t testing.TB, ex storetest.Execer, id string, at int64) {
	t.Helper()
	res, err := ex.ExecContext(context.Background(), `UPDATE fs_receipts SET created_at = ?
		WHERE id = ? OR created_at < (SELECT created_at FROM fs_receipts WHERE id = ?)`, at, id, id)
	if err != nil {
		t.Fatalf("back-date receipt %s: %v", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		t.Fatalf("back-date receipt %s: no such receipt (%v)", id, err)
	}
}

// Kept reports whether receipt id is still kept (retention has not
// deleted it).
func Kept(t testing.TB, db *store.DB, id string) bool {
	t.Helper()
	var n int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM fs_receipts WHERE id = ?`, id).Scan(&n); err != nil {
		t.Fatalf("look for receipt %s: %v", id, err)
	}
	return n == 1
}
