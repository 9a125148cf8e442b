//go:build !windows

package jobs_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

func trusted(c *config.Config) { c.Policy.Mode = config.ModeTrusted }

// TestEStopHoldsQueue drives the wired app: the model's e-stop kills a
// running job (cancelled, never requeued) and holds the queue; a reset
// alone does not restart anything; the operator's resume does.
func TestEStopHoldsQueue(t *testing.T) {
	needShell(t)
	in := hearthtest.Start(t, trusted)
	const conv = "estop-test"
	route := mcpserver.Route(map[string]any{"hearth/conversation": conv})
	c := hearthtest.Connect(t, in.URL, conv)
	r := c.Call("task", map[string]any{"operation": "submit", "jobs": []any{
		sh("sleep 30"),
		with(sh("true"), "delay_ms", 500),
	}})
	ids := r.Get("result.ids").([]any)
	running, delayed := ids[0].(string), ids[1].(string)
	q := in.App.Jobs
	ctx := context.Background()
	waitFor := func(id, state string) *jobs.Job {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			j, err := q.Get(ctx, route, id)
			if err != nil {
				t.Fatal(err)
			}
			if j.State == state {
				return j
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s is %s, never %s", id, j.State, state)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(running, jobs.StateRunning)
	if e := c.Call("machine", map[string]any{"operation": "estop", "reason": "test"}); e.State() != "completed" {
		t.Fatalf("estop: %s", e.Text)
	}
	j := waitFor(running, jobs.StateCancelled)
	if j.Reason == "" || j.Attempts != 1 {
		t.Fatalf("job killed by the e-stop: %+v", j)
	}
	time.Sleep(800 * time.Millisecond) // the delayed job is due now
	if j, _ := q.Get(ctx, route, delayed); j.State != jobs.StateQueued {
		t.Fatalf("held queue ran a due job: %s", j.State)
	}
	if err := in.App.Operator.Reset(ctx, "tester"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if j, _ := q.Get(ctx, route, delayed); j.State != jobs.StateQueued {
		t.Fatalf("a reset restarted the queue: %s", j.State)
	}
	if err := in.App.Operator.ResumeQueue(ctx, "tester"); err != nil {
		t.Fatal(err)
	}
	waitFor(delayed, jobs.StateCompleted)
}

// TestInterruptionJournaled restarts an in-process Hearth while a block
// job runs: the job is blocked with outcome unknown and the ledger holds
// the interruption.
func TestInterruptionJournaled(t *testing.T) {
	needShell(t)
	home := t.TempDir()
	in := hearthtest.StartHome(t, home, trusted)
	const conv = "journal-test"
	route := mcpserver.Route(map[string]any{"hearth/conversation": conv})
	c := hearthtest.Connect(t, in.URL, conv)
	r := c.Call("task", map[string]any{"operation": "submit", "jobs": []any{
		with(sh("sleep 30"), "on_interrupt", "block"),
		sh("sleep 30"),
	}})
	ids := r.Get("result.ids").([]any)
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, _ := in.App.Jobs.Get(ctx, route, ids[0].(string))
		b, _ := in.App.Jobs.Get(ctx, route, ids[1].(string))
		if a.State == jobs.StateRunning && b.State == jobs.StateRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("jobs never ran")
		}
		time.Sleep(10 * time.Millisecond)
	}
	in.Stop()

	in2 := hearthtest.StartHome(t, home, trusted)
	// Wait (bounded) rather than Get: recovery runs as Serve starts.
	blocked, _, err := in2.App.Jobs.Wait(ctx, route, ids[0].(string), 10*time.Second)
	if err != nil || blocked.State != jobs.StateBlocked || blocked.Outcome != jobs.OutcomeUnknown {
		t.Fatalf("block job after restart: %+v %v", blocked, err)
	}
	requeued, _ := in2.App.Jobs.Get(ctx, route, ids[1].(string))
	if requeued.Interruptions != 1 {
		t.Fatalf("requeue job after restart: %+v", requeued)
	}
	entries, err := in2.App.Ledger.Tail(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, e := range entries {
		var d struct {
			JobID  string `json:"job_id"`
			Action string `json:"action"`
		}
		if e.Kind == "outcome" && json.Unmarshal(e.Data, &d) == nil && d.JobID != "" {
			seen[d.JobID] = d.Action
		}
	}
	if seen[ids[0].(string)] != "blocked" || seen[ids[1].(string)] != "requeued" {
		t.Fatalf("ledger interruption entries: %v", seen)
	}
}
