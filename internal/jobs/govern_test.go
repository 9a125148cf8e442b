//go:build !windows

package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

func trusted(c *config.Config) { c.Policy.Mode = config.ModeTrusted }

// estopTreeScript starts a background sleep, writes its pid and then the
// shell's own pid to the file given as $1, and waits: a process tree of
// two whose members a test can check.
const estopTreeScript = `sleep 30 & echo $! > "$1"; echo $$ >> "$1"; wait`

// estopTreePids waits (bounded) until estopTreeScript has written both
// pids, and checks that both run.
func estopTreePids(t *testing.T, pidfile string) []int {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(pidfile)
		f := strings.Fields(string(b))
		if len(f) != 2 || !strings.HasSuffix(string(b), "\n") {
			continue
		}
		pids := make([]int, 2)
		for i, s := range f {
			n, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("pidfile %q: %v", b, err)
			}
			if !estopProcessAlive(n) {
				t.Fatalf("process %d of the tree is not running before the e-stop", n)
			}
			pids[i] = n
		}
		return pids
	}
	t.Fatal("the job's process tree never wrote its pids")
	return nil
}

// estopProcessAlive reports whether pid exists and is not a zombie: a
// killed grandchild is reparented and may stay a zombie where the reaper
// (PID 1 in a container) never reaps it; it is dead all the same.
func estopProcessAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true // no procfs here: kill(pid, 0) succeeded
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// estopTreeDies fails unless every pid is gone within ten seconds.
func estopTreeDies(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for estopProcessAlive(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d of the job's tree still runs after the e-stop", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestEStopHoldsQueue drives the wired app: the model's e-stop kills a
// running job's whole process tree (cancelled, never requeued) and holds
// the queue; a reset
// alone does not restart anything; the operator's resume does.
func TestEStopHoldsQueue(t *testing.T) {
	needShell(t)
	in := hearthtest.Start(t, trusted)
	const conv = "estop-test"
	route := mcpserver.Route(map[string]any{"hearth/conversation": conv})
	c := hearthtest.Connect(t, in.URL, conv)
	pidfile := filepath.Join(t.TempDir(), "pids")
	r := c.Call("task", map[string]any{"operation": "submit", "jobs": []any{
		sh(estopTreeScript, "sh", pidfile),
		// Due well after the e-stop below even on a loaded machine (a job
		// that started before it would be killed by it, not held).
		with(sh("true"), "delay_ms", 3000),
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
	pids := estopTreePids(t, pidfile)
	if e := c.Call("machine", map[string]any{"operation": "estop", "reason": "test"}); e.State() != "completed" {
		t.Fatalf("estop: %s", e.Text)
	}
	j := waitFor(running, jobs.StateCancelled)
	if j.Reason == "" || j.Attempts != 1 {
		t.Fatalf("job killed by the e-stop: %+v", j)
	}
	estopTreeDies(t, pids)
	dj, err := q.Get(ctx, route, delayed)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(dj.RunAt) + 300*time.Millisecond) // the delayed job is due now
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
	// Each job says when its process runs: a job seen running may still be
	// between its claim and its journaled intent, and one stopped there
	// provably never started, so it is queued again as if untouched.
	marks := filepath.Join(t.TempDir(), "started")
	r := c.Call("task", map[string]any{"operation": "submit", "jobs": []any{
		with(sh(`echo x >> "$1"; exec sleep 30`, "sh", marks), "on_interrupt", "block"),
		sh(`echo x >> "$1"; exec sleep 30`, "sh", marks),
	}})
	ids := r.Get("result.ids").([]any)
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		a, _ := in.App.Jobs.Get(ctx, route, ids[0].(string))
		b, _ := in.App.Jobs.Get(ctx, route, ids[1].(string))
		m, _ := os.ReadFile(marks)
		if a.State == jobs.StateRunning && b.State == jobs.StateRunning && strings.Count(string(m), "x") == 2 {
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
	blocked, _, err := in2.App.Jobs.Wait(ctx, in2.App.Dispatcher, route, ids[0].(string), 10*time.Second)
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
