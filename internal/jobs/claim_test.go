//go:build !windows

package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
	"github.com/hearth-dev/hearth/internal/govern/governtest"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// TestClaimCommitsTheIntent: an admitted attempt's intent (its commands
// row and ledger entry) commits with the claim that marks it running, so
// no reader ever sees a running job without its journaled command. The
// test samples the database while 60 short jobs run four at a time; with
// the claim and the intent in separate commits it sees the gap between
// them.
func TestClaimCommitsTheIntent(t *testing.T) {
	needShell(t)
	in := hearthtest.Start(t, trusted)
	const conv = "claim-intent"
	route := mcpserver.Route(map[string]any{"hearth/conversation": conv})
	c := hearthtest.Connect(t, in.URL, conv)
	specs := make([]any, 60)
	for i := range specs {
		specs[i] = sh(`exit 0`)
	}
	r := c.Call("task", map[string]any{"operation": "submit", "jobs": specs})
	ids, _ := r.Get("result.ids").([]any)
	if len(ids) != len(specs) {
		t.Fatalf("submit: %s", r.Text)
	}
	ctx := context.Background()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, id := range ids {
			for {
				j, timedOut, err := in.App.Jobs.Wait(ctx, in.App.Dispatcher, route, id.(string), time.Minute)
				if err != nil || timedOut {
					t.Errorf("job %v: %v %v", id, timedOut, err)
					return
				}
				if dispatch.Settled(j.State) {
					break
				}
			}
		}
	}()
	samples := 0
	for {
		select {
		case <-done:
			if samples == 0 {
				t.Fatal("no sample taken")
			}
			return
		default:
		}
		// A command, once journaled, stays: read after the futures, it is
		// there if it was when they were read.
		for id, cmd := range dispatchtest.Running(t, in.App.DB, "job") {
			if cmd == "" || governtest.CommandState(t, in.App.DB, cmd) == "" {
				t.Fatalf("sample %d: job %s is running without its journaled command (%q)", samples, id, cmd)
			}
		}
		samples++
	}
}

// TestEndHandsTheSlotOn: while jobs are due, the commit that records the
// end of a run also claims (and journals) the next due job for the slot it
// frees, so a busy class needs one commit per job, not one each for the
// claim, the intent and the end.
func TestEndHandsTheSlotOn(t *testing.T) {
	needShell(t)
	in := hearthtest.Start(t, trusted)
	const conv = "handoff"
	route := mcpserver.Route(map[string]any{"hearth/conversation": conv})
	c := hearthtest.Connect(t, in.URL, conv)
	const n = 60
	specs := make([]any, n)
	for i := range specs {
		specs[i] = sh(`exit 0`)
	}
	before := in.App.DB.Commits()
	r := c.Call("task", map[string]any{"operation": "submit", "jobs": specs})
	ids, _ := r.Get("result.ids").([]any)
	if len(ids) != n {
		t.Fatalf("submit: %s", r.Text)
	}
	ctx := context.Background()
	for _, id := range ids {
		for {
			j, timedOut, err := in.App.Jobs.Wait(ctx, in.App.Dispatcher, route, id.(string), time.Minute)
			if err != nil || timedOut {
				t.Fatalf("job %v: %v %v", id, timedOut, err)
			}
			if dispatch.Settled(j.State) {
				if j.State != jobs.StateCompleted {
					t.Fatalf("job %v: %+v", id, j)
				}
				break
			}
		}
	}
	// One commit per job, plus the submit, the first claims of the free
	// slots and a few empty claims as the queue runs dry; three per job
	// without the hand-off, two with the claim and the intent in one.
	if got := in.App.DB.Commits() - before; got > n*3/2 {
		t.Fatalf("%d commits for %d jobs, want at most %d", got, n, n*3/2)
	}
}
