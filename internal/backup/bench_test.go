package backup

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hearth-dev/hearth/internal/ledger"
)

// benchEntries is the ledger size the daily backup is measured at.
const benchEntries = 100_000

// fillLedger appends n entries shaped like Hearth's intents, a thousand
// per transaction, and signs a checkpoint of them.
func fillLedger(b *testing.B, h *hearthData, n int) {
	b.Helper()
	ctx := context.Background()
	for done := 0; done < n; {
		batch := min(1000, n-done)
		err := h.db.InTx(ctx, func(tx *sql.Tx) error {
			for i := range batch {
				_, err := h.l.AppendTx(ctx, tx, ledger.KindIntent, map[string]any{
					"primitive": "machine.exec", "risk": "exec", "i": done + i,
					"input_sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		done += batch
	}
	if _, err := h.l.Checkpoint(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkDailyBackup measures a daily backup of a database with 100,000
// ledger entries: "verified" is the whole of Make (VACUUM INTO, integrity
// check, ledger verification, record, pruning); "copy" is the VACUUM INTO
// alone, the baseline the verification adds to.
func BenchmarkDailyBackup(b *testing.B) {
	h := newHearthData(b)
	fillLedger(b, h, benchEntries)
	ctx := context.Background()
	b.Run("copy", func(b *testing.B) {
		dir := b.TempDir()
		i := 0
		for b.Loop() {
			i++
			if _, err := h.db.R.ExecContext(ctx, "VACUUM INTO ?", filepath.Join(dir, "copy-"+strconv.Itoa(i)+".db")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("verified", func(b *testing.B) {
		o := h.opts(ReasonDaily, 2)
		var size int64
		for b.Loop() {
			info, err := Make(ctx, h.db, o)
			if err != nil {
				b.Fatal(err)
			}
			if info.LedgerEntries != benchEntries {
				b.Fatalf("backup has %d entries", info.LedgerEntries)
			}
			size = info.Size
		}
		b.ReportMetric(float64(size)/(1<<20), "MB/backup")
	})
}
