package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

func (db *DB) preparedTxStmts() int {
	db.stmtMu.Lock()
	defer db.stmtMu.Unlock()
	return len(db.txStmts)
}

// TestTxExecPreparesHotWritesOnce: a write run through TxExec inside InTx
// is prepared by the next transaction and reused from then on; it writes
// and rolls back exactly as tx.ExecContext would; the number kept is
// bounded.
func TestTxExecPreparesHotWritesOnce(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.W.Exec(`CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	const ins = `INSERT INTO t(k, v) VALUES (?, ?)`
	insert := func(k int) error {
		return db.InTx(ctx, func(tx *sql.Tx) error {
			_, err := db.TxExec(ctx, tx, ins, k, fmt.Sprint("v", k))
			return err
		})
	}
	if err := insert(1); err != nil {
		t.Fatal(err)
	}
	if n := db.preparedTxStmts(); n != 0 {
		t.Fatalf("prepared inside the first transaction: %d", n)
	}
	for k := 2; k <= 5; k++ {
		if err := insert(k); err != nil {
			t.Fatal(err)
		}
	}
	if n := db.preparedTxStmts(); n != 1 {
		t.Fatalf("prepared statements after five inserts: %d, want 1", n)
	}
	// A rolled-back transaction's write through the statement is undone.
	boom := errors.New("boom")
	err = db.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := db.TxExec(ctx, tx, ins, 6, "v6"); err != nil {
			return err
		}
		var v string
		if err := db.TxQueryRow(ctx, tx, `SELECT v FROM t WHERE k = ?`, 6).Scan(&v); err != nil || v != "v6" {
			return fmt.Errorf("read own write: %q %v", v, err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	var n int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM t`).Scan(&n); err != nil || n != 5 {
		t.Fatalf("rows after the rollback: %d %v", n, err)
	}
	// A constraint error comes back as tx.ExecContext's would.
	if err := insert(1); err == nil {
		t.Fatal("a duplicate key through the prepared statement must fail")
	}
	// Distinct queries beyond the bound run unprepared.
	for i := range maxTxStmts + 20 {
		q := fmt.Sprintf(`UPDATE t SET v = v WHERE k = %d`, i)
		for range 2 {
			if err := db.InTx(ctx, func(tx *sql.Tx) error { _, err := db.TxExec(ctx, tx, q); return err }); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := db.preparedTxStmts(); n > maxTxStmts {
		t.Fatalf("%d statements kept, bound %d", n, maxTxStmts)
	}
}
