package storetest

import (
	"context"
	"database/sql"
	"strconv"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
)

// FullDiskError makes db's disk look full to SQLite and returns the error
// a write through db.InTx then gets: it caps the database file at the
// pages it has (max_page_count, on the one write connection) and writes a
// megabyte. The store notes the full disk as it would for a real one, so
// a test sees what Hearth makes of it (store.IsFull, db.DiskFull, the
// words a call answers).
func FullDiskError(t testing.TB, db *store.DB) error {
	t.Helper()
	var pages int
	if err := db.W.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatalf("read the database's size: %v", err)
	}
	if _, err := db.W.Exec(`PRAGMA max_page_count = ` + strconv.Itoa(pages)); err != nil {
		t.Fatalf("cap the database's size: %v", err)
	}
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO store_probe(b) VALUES (zeroblob(1000000))`)
		return err
	})
	if err == nil {
		t.Fatal("a megabyte was written to a database capped at its size")
	}
	return err
}
