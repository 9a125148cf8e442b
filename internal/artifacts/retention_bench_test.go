package artifacts_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// pruneVolume is the history of a Hearth that has been busy for months:
// many finished rows, which nothing alive refers to, and a few live ones.
const (
	benchFinished = 30_000 // finished futures, finished jobs, future_deps rows
	benchLive     = 20     // unfinished futures, queued jobs, pending permits, arrivals, open runs
	benchOld      = 400    // old artifacts per pass
)

// fillHistory writes the finished and live rows of pruneVolume straight
// into db. Each live kind names one of the returned artifact ids (which the
// caller inserts as old artifacts), so a correct pass keeps them.
func fillHistory(tb testing.TB, db *store.DB) (liveRefs []string) {
	tb.Helper()
	ctx := context.Background()
	pad := strings.Repeat("x", 300)
	err := db.InTx(ctx, func(tx *sql.Tx) error {
		ex := func(q string, args ...any) error { _, err := tx.ExecContext(ctx, q, args...); return err }
		var prev string
		for i := range benchFinished {
			f := primitive.NewID("fut")
			if err := ex(`INSERT INTO futures(id, route, primitive, input, input_sha256, state, created_at, result, finished_at)
				VALUES (?, 'conv', 'machine.exec', ?, '', 'completed', ?, ?, ?)`,
				f, `{"command":"x","pad":"`+pad+`"}`, i, `{"artifact":{"id":"`+primitive.NewID("art")+`"},"pad":"`+pad+`"}`, i+1); err != nil {
				return err
			}
			if prev != "" {
				if err := ex(`INSERT INTO future_deps(future_id, dep_id) VALUES (?, ?)`, f, prev); err != nil {
					return err
				}
			}
			prev = f
			job := primitive.NewID("job")
			if err := ex(`INSERT INTO futures(id, route, primitive, input, input_sha256, state, created_at, finished_at, class, run_at, on_interrupt)
				VALUES (?, 'conv', 'task.submit', '{}', '', 'completed', ?, ?, 'job', 0, 'requeue')`, job, i, i+1); err != nil {
				return err
			}
			if err := ex(`INSERT INTO jobs(id, command, args, timeout_ms, result) VALUES (?, 'x', ?, 1, ?)`,
				job, `["`+pad+`"]`, `{"stdout":{"artifact":{"id":"`+primitive.NewID("art")+`"}},"pad":"`+pad+`"}`); err != nil {
				return err
			}
		}
		for range benchLive {
			ref := func() string { a := primitive.NewID("art"); liveRefs = append(liveRefs, a); return a }
			w := primitive.NewID("fut")
			if err := ex(`INSERT INTO futures(id, route, primitive, input, input_sha256, state, created_at)
				VALUES (?, 'conv', 'artifact.read', ?, '', 'waiting', 0)`, w, `{"id":"`+ref()+`"}`); err != nil {
				return err
			}
			dep := primitive.NewID("fut")
			if err := ex(`INSERT INTO futures(id, route, primitive, input, input_sha256, state, created_at, result, finished_at)
				VALUES (?, 'conv', 'machine.exec', '{}', '', 'completed', 0, ?, 1)`, dep, `{"artifact":{"id":"`+ref()+`"}}`); err != nil {
				return err
			}
			if err := ex(`INSERT INTO future_deps(future_id, dep_id) VALUES (?, ?)`, w, dep); err != nil {
				return err
			}
			job := primitive.NewID("job")
			if err := ex(`INSERT INTO futures(id, route, primitive, input, input_sha256, state, created_at, class, run_at, on_interrupt)
				VALUES (?, 'conv', 'task.submit', '{}', '', 'queued', 0, 'job', 0, 'requeue')`, job); err != nil {
				return err
			}
			if err := ex(`INSERT INTO jobs(id, command, args, timeout_ms) VALUES (?, 'x', ?, 1)`, job, `["`+ref()+`"]`); err != nil {
				return err
			}
			if err := ex(`INSERT INTO permits(id, route, primitive, input, input_sha256, future_id, command_id, state, created_at, expires_at)
				VALUES (?, 'conv', 'machine.exec', ?, '', ?, ?, 'pending', 0, 1)`, primitive.NewID("pmt"), `{"args":["`+ref()+`"]}`, w, primitive.NewID("cmd")); err != nil {
				return err
			}
			if err := ex(`INSERT INTO arrivals(route, future_id, payload, created_at) VALUES ('conv', ?, ?, ?)`,
				dep, `{"artifact":{"id":"`+ref()+`"}}`, time.Now().UnixMilli()); err != nil {
				return err
			}
			if err := ex(`INSERT INTO runs(id, route, state, objective, summary, created_at, updated_at) VALUES (?, 'conv', 'open', 'o', ?, 0, 0)`,
				primitive.NewID("run"), "see "+ref()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return liveRefs
}

// insertOld inserts n artifact rows created long ago (no files: Prune
// tolerates a missing blob), plus one row for each of refs.
func insertOld(tb testing.TB, db *store.DB, n int, refs []string) {
	tb.Helper()
	err := db.InTx(context.Background(), func(tx *sql.Tx) error {
		all := append([]string{}, refs...)
		for range n - len(refs) {
			all = append(all, primitive.NewID("art"))
		}
		for _, id := range all {
			if _, err := tx.Exec(`INSERT INTO artifacts(id, route, name, mime, size, sha256, file, source, created_at)
				VALUES (?, 'conv', 'a', 'text/plain', 1, '', ?, 'test', 0) ON CONFLICT(id) DO NOTHING`, id, id+".bin"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// writeProbe makes a small write every millisecond while a pass runs and
// records the longest wait for the single write connection: how long the
// pass kept everything else from writing.
func writeProbe(db *store.DB) (stop func() time.Duration) {
	var mu sync.Mutex
	var worst time.Duration
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			t0 := time.Now()
			db.W.Exec(`INSERT INTO settings(key, value) VALUES ('bench_probe', '1') ON CONFLICT(key) DO UPDATE SET value = excluded.value`)
			mu.Lock()
			worst = max(worst, time.Since(t0))
			mu.Unlock()
		}
	})
	return func() time.Duration {
		close(done)
		wg.Wait()
		return worst
	}
}

// BenchmarkPruneArtifacts prunes benchOld old artifacts per pass from a
// database holding benchFinished finished futures, jobs and future_deps
// rows. It reports the longest any other write waited for the write
// connection during the pass (max-write-wait-ms).
func BenchmarkPruneArtifacts(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "hearth.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s := &artifacts.Store{DB: db, Dir: filepath.Join(dir, "artifacts")}
	p := pruner(b, s)
	refs := fillHistory(b, db)
	var worst time.Duration
	for b.Loop() {
		b.StopTimer()
		insertOld(b, db, benchOld, refs)
		stop := writeProbe(db)
		b.StartTimer()
		rep, err := p.Prune(ctx, time.Now().Add(-time.Hour))
		b.StopTimer()
		worst = max(worst, stop())
		b.StartTimer()
		if err != nil || rep.Artifacts != benchOld-len(refs) || rep.Referenced != len(refs) {
			b.Fatalf("%+v %v; want %d deleted, %d referenced", rep, err, benchOld-len(refs), len(refs))
		}
	}
	b.ReportMetric(float64(worst.Microseconds())/1000, "max-write-wait-ms")
}
