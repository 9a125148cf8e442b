package app_test

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts/artifactstest"
	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/ledger/ledgertest"
	"github.com/hearth-dev/hearth/internal/secrets"
	"github.com/hearth-dev/hearth/internal/store"
)

// BenchmarkStartup times a Hearth start (open, listen, recover, serve:
// until Ready) on a data directory holding a history: ledger entries,
// finished futures and artifacts, at a tenth of, at, and (selected by name,
// -bench 'Startup/data=x10') at ten times 100,000 / 100,000 / 10,000, to
// show how start-up grows with the data. start-ms is the start alone.
func BenchmarkStartup(b *testing.B) {
	for _, sc := range []struct {
		name                         string
		entries, futures, artifactsN int
	}{
		{"x0.1", 10_000, 10_000, 1_000},
		{"x1", 100_000, 100_000, 10_000},
		{"x10", 1_000_000, 1_000_000, 100_000},
	} {
		b.Run("data="+sc.name, func(b *testing.B) {
			if f := flag.Lookup("test.bench"); sc.name == "x10" && (f == nil || !strings.Contains(f.Value.String(), "x10")) {
				b.Skip("building ten times the data takes minutes; select it with -bench 'Startup/data=x10'")
			}
			home := b.TempDir()
			hearthtest.StartHome(b, home, nil).Stop()
			populate(b, home, sc.entries, sc.futures, sc.artifactsN)
			var total time.Duration
			runs := 0
			for b.Loop() {
				start := time.Now()
				in := hearthtest.StartHome(b, home, nil)
				total += time.Since(start)
				runs++
				b.StopTimer()
				in.Stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(runs), "start-ms/op")
		})
	}
}

// populate writes the history into home's database, as a stopped Hearth
// would have left it: entries appended through the ledger (in batches of
// one transaction each), finished futures with their results, artifacts
// with their files.
func populate(b *testing.B, home string, entries, futures, artifactsN int) {
	b.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(home, "hearth.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	skey, _, err := ledger.LoadOrCreateKey(secrets.ProtectedFileKeyStore{Path: filepath.Join(home, "ledger.key")})
	if err != nil {
		b.Fatal(err)
	}
	l, err := ledger.Open(db, skey)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 5000
	for done := 0; done < entries; done += batch {
		err := db.InTx(ctx, func(tx *sql.Tx) error {
			for i := done; i < min(entries, done+batch); i++ {
				if _, err := l.AppendTx(ctx, tx, ledger.KindIntent, map[string]any{"primitive": "fs.read", "n": i}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	now := time.Now().UnixMilli()
	for done := 0; done < futures; done += batch {
		err := db.InTx(ctx, func(tx *sql.Tx) error {
			fs := make([]dispatchtest.Future, 0, batch)
			for i := done; i < min(futures, done+batch); i++ {
				t := now - int64(futures-i)
				fs = append(fs, dispatchtest.Future{ID: fmt.Sprintf("f%08d", i), Route: fmt.Sprintf("route%d", i%50), Primitive: "fs.read",
					State: "completed", Detached: true, Result: `{"state":"completed","result":{}}`, CreatedAt: t, StartedAt: t, FinishedAt: t})
			}
			dispatchtest.InsertFutures(b, tx, fs...)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	dir := filepath.Join(home, "artifacts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	for done := 0; done < artifactsN; done += batch {
		err := db.InTx(ctx, func(tx *sql.Tx) error {
			as := make([]artifactstest.Artifact, 0, batch)
			for i := done; i < min(artifactsN, done+batch); i++ {
				name := fmt.Sprintf("a%08d", i)
				if err := os.WriteFile(filepath.Join(dir, name), []byte("out"), 0o600); err != nil {
					return err
				}
				as = append(as, artifactstest.Artifact{ID: name, Route: fmt.Sprintf("route%d", i%50), Name: "out.txt", Mime: "text/plain", Size: 3,
					File: name, Source: "machine.exec", CreatedAt: now - int64(artifactsN-i)})
			}
			artifactstest.Insert(b, tx, as...)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for what, n := range map[string][2]int{
		"ledger entries": {ledgertest.Count(b, db), entries},
		"futures":        {dispatchtest.Count(b, db), futures},
		"artifacts":      {artifactstest.Count(b, db), artifactsN},
	} {
		if n[0] < n[1] {
			b.Fatalf("the database holds %d %s, want at least %d", n[0], what, n[1])
		}
	}
}
