//go:build !windows

package web_test

import (
	"context"
	"html"
	"regexp"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/ledger/ledgertest"
)

// TestTasksSaysTheEStopStoppedIt: a job and a call the emergency stop
// killed while they ran are journaled as stopped, by the e-stop (never
// UNKNOWN), and Tasks says "stopped by the emergency stop" for both
// rather than "cancelled" (which reads as if someone had cancelled them).
func TestTasksSaysTheEStopStoppedIt(t *testing.T) {
	f := newFixture(t, func(c *config.Config) { hearthtest.Trusted(c); hearthtest.ProductionBudget(c) })
	b := f.login(t)
	ctx := context.Background()
	c := hearthtest.Connect(t, f.in.URL, "estop-tasks")
	r := c.Call("task", map[string]any{"operation": "submit", "job": map[string]any{"command": "sleep", "args": []string{"30"}}})
	job, _ := hearthtest.Get(r.Env, "result.id").(string)
	if job == "" {
		job, _ = hearthtest.Get(r.Env, "result.ids.0").(string)
	}
	if job == "" {
		t.Fatalf("submit: %s", r.Raw)
	}
	call := c.Call("machine", map[string]any{"operation": "exec", "command": "sleep", "args": []string{"30"}})
	future, _ := call.Env["future_id"].(string)
	if call.State() != "pending" || future == "" {
		t.Fatalf("exec: %s", call.Raw)
	}
	state := func() string {
		t.Helper()
		ls, err := f.in.App.Jobs.ListAllJobs(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			if l.ID == job {
				return l.State
			}
		}
		return ""
	}
	for deadline := time.Now().Add(20 * time.Second); state() != jobs.StateRunning; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the job is %s, never running", state())
		}
	}
	if err := f.in.App.Operator.EStop(ctx, "Ann", "stop everything"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); state() != jobs.StateCancelled; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the job is %s after the e-stop, never cancelled", state())
		}
	}
	c.WaitArrival(future, call)

	if o := ledgertest.Outcome(t, f.in.App.DB, jobs.RunCommandID(job, 1)); o["outcome"] != "stopped" || o["stopped_by"] != "estop" {
		t.Fatalf("the job the e-stop killed is journaled as %v, want stopped by the e-stop", o)
	}
	page := f.get(t, b, "/tasks")
	for what, id := range map[string]string{"job": job, "call": future} {
		m := regexp.MustCompile(`data-task-id="` + id + `"[^>]*>\s*<span[^>]*data-testid="task-summary"[^>]*>([^<]*)<`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("Tasks lacks the %s %s:\n%s", what, id, page)
		}
		if s := html.UnescapeString(m[1]); !regexp.MustCompile(`— stopped by the emergency stop at `).MatchString(s) {
			t.Errorf("Tasks says of the %s the e-stop stopped: %q", what, s)
		}
	}
}
