// Package runstest writes the runs' tables for other packages' tests, so
// that they set up an open or closed run and its continuations without
// naming those tables or their columns (internal/runs owns them:
// docs/ARCHITECTURE.md, "Who owns which table").
package runstest

import (
	"context"
	"testing"

	"github.com/hearth-dev/hearth/internal/store/storetest"
)

// Run is a run's row, as InsertRuns writes it.
type Run struct {
	ID, Route string
	// State is open or closed.
	State, Objective, Summary string
	// NextActions is the checkpoint's JSON array of strings; "" writes [].
	NextActions string
	// CreatedAt, UpdatedAt and ClosedAt are unix milliseconds; ClosedAt
	// is written only for a closed run.
	CreatedAt, UpdatedAt, ClosedAt int64
}

// InsertRuns writes rs, as runs.Service records a run and its last
// checkpoint, failing the test on an error.
func InsertRuns(t testing.TB, ex storetest.Execer, rs ...Run) {
	t.Helper()
	for _, r := range rs {
		next := r.NextActions
		if next == "" {
			next = "[]"
		}
		var closed any
		if r.State == "closed" {
			closed = r.ClosedAt
		}
		if _, err := ex.ExecContext(context.Background(), `INSERT INTO runs(id, route, state, objective, summary, next_actions, created_at, updated_at, closed_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.Route, r.State, r.Objective, r.Summary, next, r.CreatedAt, r.UpdatedAt, closed); err != nil {
			t.Fatalf("insert run %s: %v", r.ID, err)
		}
	}
}

// CloseAll closes every run (at 1 ms), as though each had been closed.
func CloseAll(t testing.TB, ex storetest.Execer) {
	t.Helper()
	if _, err := ex.ExecContext(context.Background(), `UPDATE runs SET state = 'closed', closed_at = 1`); err != nil {
		t.Fatalf("close every run: %v", err)
	}
}

// Continuation is a run's continuation, as InsertContinuation writes it.
type Continuation struct {
	ID, RunID, Route, Prompt string
	// State is scheduled, blocked, dry_run, ready or woken.
	State            string
	DueAt, CreatedAt int64 // unix milliseconds
}

// InsertContinuation writes c, as runs.Service schedules a continuation
// of its run, failing the test on an error.
func InsertContinuation(t testing.TB, ex storetest.Execer, c Continuation) {
	t.Helper()
	if _, err := ex.ExecContext(context.Background(), `INSERT INTO continuations(id, run_id, route, prompt, due_at, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.RunID, c.Route, c.Prompt, c.DueAt, c.State, c.CreatedAt); err != nil {
		t.Fatalf("insert continuation %s: %v", c.ID, err)
	}
}
