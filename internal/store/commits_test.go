package store_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
)

// TestCommitsCountsCommittedTransactions: Commits rises with each
// transaction InTx commits, and not for one it rolls back.
func TestCommitsCountsCommittedTransactions(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before := db.Commits()
	for range 3 {
		if err := db.InTx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES ('commits-test', '1') ON CONFLICT(key) DO UPDATE SET value = value + 1`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got := db.Commits() - before; got != 3 {
		t.Fatalf("3 committed transactions counted %d", got)
	}
	refused := errors.New("refused")
	if err := db.InTx(ctx, func(*sql.Tx) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("rolled back transaction: %v", err)
	}
	if got := db.Commits() - before; got != 3 {
		t.Fatalf("a rolled-back transaction was counted: %d", got)
	}
}
