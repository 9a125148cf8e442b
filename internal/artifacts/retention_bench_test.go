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
	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
	"github.com/hearth-dev/hearth/internal/govern/governtest"
	"github.com/hearth-dev/hearth/internal/jobs/jobstest"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/runs/runstest"
	"github.com/hearth-dev/hearth/internal/store"
)

// pruneVolume is the history of a Hearth that has been busy for months:
// many finished rows, which nothing alive refers to, and a few live ones.
const (
	benchFinished = 30_000 // finished futures, finished jobs, future_deps rows
	benchLive     = 20     // unfinished futures, queued jobs, pending permits, arrivals, open runs
	benchOld      = 400    // old artifacts per pass
)

// fillHistory writes the finished and live rows of pruneVolume into db
// through the owners' fixtures, in one transaction. Each live kind names
// one of the returned artifact ids (which the caller inserts as old
// artifacts), so a correct pass keeps them.
func fillHistory(tb testing.TB, db *store.DB) (liveRefs []string) {
	tb.Helper()
	pad := strings.Repeat("x", 300)
	var (
		futures  []dispatchtest.Future
		deps     [][2]string // future, the one it waits for
		jobs     []jobstest.Job
		permits  []governtest.Permit
		arrivals []dispatchtest.Arrival
		runs     []runstest.Run
	)
	var prev string
	for i := range int64(benchFinished) {
		f := primitive.NewID("fut")
		futures = append(futures, dispatchtest.Future{ID: f, Route: "conv", Primitive: "machine.exec", Input: `{"command":"x","pad":"` + pad + `"}`,
			State: "completed", CreatedAt: i, Result: `{"artifact":{"id":"` + primitive.NewID("art") + `"},"pad":"` + pad + `"}`, FinishedAt: i + 1})
		if prev != "" {
			deps = append(deps, [2]string{f, prev})
		}
		prev = f
		job := primitive.NewID("job")
		futures = append(futures, dispatchtest.Future{ID: job, Route: "conv", Primitive: "task.submit", State: "completed", CreatedAt: i, FinishedAt: i + 1,
			Class: "job", OnInterrupt: "requeue"})
		jobs = append(jobs, jobstest.Job{ID: job, Command: "x", Args: `["` + pad + `"]`, TimeoutMS: 1,
			Result: `{"stdout":{"artifact":{"id":"` + primitive.NewID("art") + `"}},"pad":"` + pad + `"}`})
	}
	for range benchLive {
		ref := func() string { a := primitive.NewID("art"); liveRefs = append(liveRefs, a); return a }
		w, dep, job := primitive.NewID("fut"), primitive.NewID("fut"), primitive.NewID("job")
		futures = append(futures,
			dispatchtest.Future{ID: w, Route: "conv", Primitive: "artifact.read", Input: `{"id":"` + ref() + `"}`, State: "waiting"},
			dispatchtest.Future{ID: dep, Route: "conv", Primitive: "machine.exec", State: "completed", Result: `{"artifact":{"id":"` + ref() + `"}}`, FinishedAt: 1},
			dispatchtest.Future{ID: job, Route: "conv", Primitive: "task.submit", State: "queued", Class: "job", OnInterrupt: "requeue"})
		deps = append(deps, [2]string{w, dep})
		jobs = append(jobs, jobstest.Job{ID: job, Command: "x", Args: `["` + ref() + `"]`, TimeoutMS: 1})
		permits = append(permits, governtest.Permit{ID: primitive.NewID("pmt"), Route: "conv", Primitive: "machine.exec", Input: `{"args":["` + ref() + `"]}`,
			FutureID: w, CommandID: primitive.NewID("cmd"), State: "pending", ExpiresAt: 1})
		arrivals = append(arrivals, dispatchtest.Arrival{Route: "conv", FutureID: dep, Payload: `{"artifact":{"id":"` + ref() + `"}}`, CreatedAt: time.Now().UnixMilli()})
		runs = append(runs, runstest.Run{ID: primitive.NewID("run"), Route: "conv", State: "open", Objective: "o", Summary: "see " + ref()})
	}
	err := db.InTx(context.Background(), func(tx *sql.Tx) error {
		dispatchtest.InsertFutures(tb, tx, futures...)
		for _, d := range deps {
			dispatchtest.InsertDeps(tb, tx, d[0], d[1])
		}
		jobstest.InsertJobs(tb, tx, jobs...)
		governtest.InsertPermits(tb, tx, permits...)
		dispatchtest.InsertArrivals(tb, tx, arrivals...)
		runstest.InsertRuns(tb, tx, runs...)
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
			// A young row, which no pass prunes.
			db.W.Exec(`INSERT INTO artifacts(id, route, name, mime, size, sha256, file, source, created_at)
				VALUES ('art_probe', 'conv', 'probe', 'text/plain', 0, '', 'art_probe.bin', 'test', ?)
				ON CONFLICT(id) DO UPDATE SET created_at = excluded.created_at`, time.Now().UnixMilli())
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
