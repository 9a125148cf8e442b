package fsops

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// insertReceipts writes n committed receipts created long ago, spread over
// 50 paths; every third one is an undo of the one before it on its path,
// so pruning walks the undoes/undone_by references too.
func insertReceipts(tb testing.TB, env testEnv, n int) {
	tb.Helper()
	ctx := context.Background()
	err := env.e.DB.InTx(ctx, func(tx *sql.Tx) error {
		last := map[string]string{}
		for i := range n {
			id := primitive.NewID("rcpt")
			path := env.path(fmt.Sprintf("f%02d.txt", i%50))
			op, undoes := "write", any(nil)
			if prev := last[path]; prev != "" && i%3 == 2 {
				op, undoes = "undo", prev
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO fs_receipts(id, route, op, path, existed_before, prior, prior_size, undoes, state, created_at, committed_at)
				VALUES (?, 'r', ?, ?, 1, ?, 64, ?, 'committed', ?, ?)`, id, op, path, make([]byte, 64), undoes, i, i); err != nil {
				return err
			}
			if undoes != nil {
				if _, err := tx.ExecContext(ctx, `UPDATE fs_receipts SET undone_at = ?, undone_by = ? WHERE id = ?`, i, id, undoes); err != nil {
					return err
				}
			}
			last[path] = id
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkPruneReceipts prunes 20,000 old receipts per pass.
func BenchmarkPruneReceipts(b *testing.B) {
	const n = 20_000
	env := newTestEngine(b)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		insertReceipts(b, env, n)
		b.StartTimer()
		rep, err := env.e.PruneReceipts(ctx, time.Now().Add(-time.Hour))
		if err != nil || rep.Receipts != n {
			b.Fatalf("%+v %v; want %d receipts pruned", rep, err, n)
		}
	}
}
