package artifacts_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/govern/governtest"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/jobs/jobstest"
	"github.com/hearth-dev/hearth/internal/runs"
	"github.com/hearth-dev/hearth/internal/runs/runstest"
)

// pruner is s's pruner asking what Hearth asks (internal/app): each owner
// of live rows, through its LiveText.
func pruner(tb testing.TB, s *artifacts.Store) *artifacts.Pruner {
	tb.Helper()
	p, err := artifacts.NewPruner(s, dispatch.LiveText, govern.LiveText, jobs.LiveText, runs.LiveText)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestPruneKeepsWhatIsAlive back-dates real artifact rows and checks that
// Prune deletes old ones (row and file) unless something alive refers to
// them.
func TestPruneKeepsWhatIsAlive(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	db := s.DB.W
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	put := func(name string) artifacts.Meta {
		t.Helper()
		m, err := s.Put(ctx, "conv", name, "text/plain", "test", []byte("content of "+name), false)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	now := time.Now()
	longAgo := now.Add(-60 * 24 * time.Hour).UnixMilli()
	cases := map[string]bool{} // name → must survive
	arts := map[string]artifacts.Meta{}
	old := func(name string, survive bool) artifacts.Meta {
		m := put(name)
		exec(`UPDATE artifacts SET created_at = ? WHERE id = ?`, longAgo, m.ID)
		cases[name], arts[name] = survive, m
		return m
	}

	old("unreferenced", false)
	young := put("young")
	cases["young"], arts["young"] = true, young

	// Mailbox: an arrival the conversation has not acknowledged keeps its
	// artifact; an acknowledged one does not, and neither does one older
	// than the limit (its conversation was abandoned: the arrival itself
	// is deleted).
	undelivered := old("undelivered arrival", true)
	delivered := old("delivered arrival", false)
	stale := old("abandoned arrival", false)
	dispatchtest.InsertArrivals(t, db,
		dispatchtest.Arrival{Seq: 1, Route: "conv", FutureID: "fut_a", Payload: `{"artifact":{"id":"` + delivered.ID + `"}}`, CreatedAt: now.UnixMilli()},
		dispatchtest.Arrival{Seq: 2, Route: "conv", FutureID: "fut_b", Payload: `{"artifact":{"id":"` + undelivered.ID + `"}}`, CreatedAt: now.UnixMilli()},
		dispatchtest.Arrival{Seq: 3, Route: "gone", FutureID: "fut_c", Payload: `{"artifact":{"id":"` + stale.ID + `"}}`, CreatedAt: longAgo})
	dispatchtest.Ack(t, db, "conv", 1)

	// Runs: an open run's checkpoint (summary, next_actions) and its
	// continuations' prompts keep what they mention; a closed run's do not.
	inSummary := old("open run summary", true)
	inNext := old("open run next action", true)
	inPrompt := old("open run continuation", true)
	inClosed := old("closed run summary", false)
	runstest.InsertRuns(t, db,
		runstest.Run{ID: "run_o", Route: "conv", State: "open", Objective: "o", Summary: "the log is in " + inSummary.ID + ".",
			NextActions: `["read ` + inNext.ID + ` again"]`},
		runstest.Run{ID: "run_c", Route: "conv", State: "closed", Objective: "o", Summary: "see " + inClosed.ID})
	runstest.InsertContinuation(t, db, runstest.Continuation{ID: "cnt_o", RunID: "run_o", Route: "conv", Prompt: "continue from artifact " + inPrompt.ID,
		State: "blocked"})

	// Permits: one awaiting the operator keeps what its input names.
	permitIn := old("pending permit", true)
	governtest.InsertPermits(t, db, governtest.Permit{ID: "pmt_p", Route: "conv", Primitive: "machine.exec", Input: `{"args":["` + permitIn.ID + `"]}`,
		FutureID: "fut_p", CommandID: "cmd_p", State: "pending", ExpiresAt: 1})

	// Futures: unfinished ones keep what their input or result names, and
	// a waiting future keeps its dependency's spilled result.
	queuedIn := old("queued future input", true)
	finished := old("finished future result", false)
	depResult := old("dependency result", true)
	dispatchtest.InsertFutures(t, db,
		dispatchtest.Future{ID: "fut_q", Route: "conv", Primitive: "artifact.read", Input: `{"id":"` + queuedIn.ID + `"}`, State: "queued"},
		dispatchtest.Future{ID: "fut_done", Route: "conv", Primitive: "machine.exec", State: "completed",
			Result: `{"artifact":{"id":"` + finished.ID + `"}}`, FinishedAt: 1},
		dispatchtest.Future{ID: "fut_dep", Route: "conv", Primitive: "machine.exec", State: "completed",
			Result: `{"result":{"spilled":true},"artifact":{"id":"` + depResult.ID + `"}}`, FinishedAt: 1},
		dispatchtest.Future{ID: "fut_wait", Route: "conv", Primitive: "machine.exec", State: "waiting"})
	dispatchtest.InsertDeps(t, db, "fut_wait", "fut_dep")

	// Jobs: a queued or running job keeps what it names; a finished one
	// does not.
	runningJob := old("running job", true)
	doneJob := old("finished job", false)
	dispatchtest.InsertFutures(t, db,
		dispatchtest.Future{ID: "job_r", Route: "conv", Primitive: "task.submit", State: "running", Class: "job", OnInterrupt: "requeue"},
		dispatchtest.Future{ID: "job_d", Route: "conv", Primitive: "task.submit", State: "completed", FinishedAt: 1, Class: "job", OnInterrupt: "requeue"})
	jobstest.InsertJobs(t, db,
		jobstest.Job{ID: "job_r", Command: "x", Args: `["` + runningJob.ID + `"]`, TimeoutMS: 1},
		jobstest.Job{ID: "job_d", Command: "x", TimeoutMS: 1, Result: `{"stdout":{"artifact":{"id":"` + doneJob.ID + `"}}}`})

	// Files: an old orphan blob and a stale temporary file go; a fresh
	// orphan (a Put between its file and its row) stays.
	oldOrphan := filepath.Join(s.Dir, "art_orphanorphanorphanor.bin")
	staleTmp := filepath.Join(s.Dir, "art_tmptmptmptmptmptmptm.bin.tmp")
	freshOrphan := filepath.Join(s.Dir, "art_freshfreshfreshfres.bin")
	for _, f := range []string{oldOrphan, staleTmp, freshOrphan} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	past := now.Add(-2 * time.Hour)
	for _, f := range []string{oldOrphan, staleTmp} {
		if err := os.Chtimes(f, past, past); err != nil {
			t.Fatal(err)
		}
	}

	ar, err := (&dispatch.Dispatcher{DB: s.DB}).PruneArrivals(ctx, now.Add(-30*24*time.Hour))
	if err != nil || ar.Arrivals != 1 {
		t.Fatalf("prune arrivals: %+v %v; want the abandoned one deleted", ar, err)
	}
	p := pruner(t, s)
	rep, err := p.Prune(ctx, now.Add(-30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for name, survive := range cases {
		m := arts[name]
		_, err := s.Metadata(ctx, m.ID)
		_, ferr := os.Stat(filepath.Join(s.Dir, m.ID+".bin"))
		switch {
		case survive && (err != nil || ferr != nil):
			t.Errorf("%s: pruned but still referenced (row %v, file %v)", name, err, ferr)
		case !survive && (!errors.Is(err, artifacts.ErrNotFound) || !errors.Is(ferr, os.ErrNotExist)):
			t.Errorf("%s: kept (row %v, file %v)", name, err, ferr)
		}
	}
	for f, want := range map[string]bool{oldOrphan: false, staleTmp: false, freshOrphan: true} {
		if _, err := os.Stat(f); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(f), err == nil, want)
		}
	}
	if rep.Artifacts != 6 || rep.Referenced != 8 || rep.Files != 8 || rep.FileErrors != 0 || rep.Bytes == 0 {
		t.Errorf("report %+v; want 6 deleted, 8 referenced, 8 files", rep)
	}
	if seqs := dispatchtest.ArrivalSeqs(t, s.DB); !slices.Equal(seqs, []int64{1, 2}) {
		t.Errorf("arrivals left %v; want the abandoned one (3) deleted and the others kept", seqs)
	}

	// Once the references are gone, the next pass takes the rest.
	dispatchtest.Ack(t, db, "conv", 2)
	dispatchtest.CompleteUnfinished(t, db)
	runstest.CloseAll(t, db)
	governtest.SetPermitStates(t, db, "denied")
	rep, err = p.Prune(ctx, now.Add(-30*24*time.Hour))
	if err != nil || rep.Artifacts != 8 || rep.Referenced != 0 {
		t.Fatalf("second pass: %+v %v", rep, err)
	}
	if l, _ := s.List(ctx, "conv", 100); len(l) != 1 || l[0].ID != young.ID {
		t.Fatalf("left after pruning: %+v", l)
	}
}

// TestPruneManyBatches makes more old artifacts than one batch holds.
func TestPruneManyBatches(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	const n = 450
	for i := 0; i < n; i++ {
		if _, err := s.Put(ctx, "conv", "a", "text/plain", "test", []byte{byte(i)}, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DB.W.Exec(`UPDATE artifacts SET created_at = 0`); err != nil {
		t.Fatal(err)
	}
	rep, err := pruner(t, s).Prune(ctx, time.Now())
	if err != nil || rep.Artifacts != n || rep.Files != n {
		t.Fatalf("%+v %v", rep, err)
	}
	if des, _ := os.ReadDir(s.Dir); len(des) != 0 {
		t.Fatalf("%d files left", len(des))
	}
}

type countReport int

func (c countReport) LogValue() slog.Value { return slog.IntValue(int(c)) }

// TestRetentionRunsAtStartAndOnTimer checks the schedule with a short
// interval and an injected clock: a pass at once, then one per tick, the
// cutoff counted in days from the clock, nothing for a 0-day pass, and the
// counts in the log.
func TestRetentionRunsAtStartAndOnTimer(t *testing.T) {
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var cutoffs []time.Time
	var logBuf bytes.Buffer
	var logMu sync.Mutex
	r := &artifacts.Retention{
		Every: 50 * time.Millisecond,
		Now:   func() time.Time { return clock },
		Log:   slog.New(slog.NewTextHandler(&lockedWriter{mu: &logMu, w: &logBuf}, nil)),
		Passes: []artifacts.RetentionPass{
			{Name: "things", Days: 30, Prune: func(_ context.Context, before time.Time) (slog.LogValuer, error) {
				mu.Lock()
				defer mu.Unlock()
				cutoffs = append(cutoffs, before)
				return countReport(7), nil
			}},
			{Name: "kept forever", Days: 0, Prune: func(context.Context, time.Time) (slog.LogValuer, error) {
				t.Error("a 0-day pass ran")
				return countReport(0), nil
			}},
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(cutoffs)
		mu.Unlock()
		if n >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(cutoffs) < 3 {
		t.Fatalf("%d passes, want a pass at start and one per tick", len(cutoffs))
	}
	if want := clock.Add(-30 * 24 * time.Hour); !cutoffs[0].Equal(want) {
		t.Fatalf("cutoff %v, want %v", cutoffs[0], want)
	}
	logMu.Lock()
	out := logBuf.String()
	logMu.Unlock()
	if !strings.Contains(out, "what=things") || !strings.Contains(out, "result=7") || !strings.Contains(out, "older_than_days=30") {
		t.Fatalf("log: %s", out)
	}

	// Nothing to prune at all: Run returns at once instead of ticking.
	idle := &artifacts.Retention{Every: time.Millisecond, Passes: []artifacts.RetentionPass{{Name: "x", Days: 0}}}
	returned := make(chan struct{})
	go func() { idle.Run(context.Background()); close(returned) }()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("Run with only 0-day passes did not return")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
