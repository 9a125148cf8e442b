//go:build !windows

package govern_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// The outcome crash tests kill Hearth (SIGKILL, from a hook) at the moment
// a call's outcome has been journaled but the durable record of its end —
// the future's completion and arrival, or the job's terminal state — has
// not been written yet. They run Hearth in a child process (this test
// binary, re-executed), restart it on the same data directory, and check
// that what the conversation is told agrees with what governance recorded.

const (
	crashHomeEnv     = "HEARTH_GOVERN_OUTCOME_CRASH_HOME"
	crashScenarioEnv = "HEARTH_GOVERN_OUTCOME_CRASH_SCENARIO"
	crashConv        = "outcome-crash"
	crashCmd         = "cmd-outcome-crash"
	crashMarker      = "crashed-at"
)

// crashCall is what each scenario calls (and replays after the restart).
func crashCall(scenario, root string) (string, map[string]any) {
	switch scenario {
	case "detached":
		return "fs", map[string]any{"operation": "write", "path": filepath.Join(root, "detached.txt"), "data": "written", "detach": true}
	case "inline-race", "approved":
		// Slower than the inline budget (100 ms): the call becomes a
		// future while it runs.
		return "machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "sleep 0.3; echo " + scenario}}
	case "job":
		return "task", map[string]any{"operation": "submit", "job": map[string]any{
			"command": "sh", "args": []string{"-c", "echo ran >> " + filepath.Join(root, "job.txt")}, "on_interrupt": "block"}}
	}
	return "", nil
}

// crashNow records where the process dies, then kills it.
func crashNow(home, id string) {
	_ = os.WriteFile(filepath.Join(home, crashMarker), []byte(id), 0o600)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// TestOutcomeCrashChild is the child process of TestCrashAfterOutcome.
func TestOutcomeCrashChild(t *testing.T) {
	home := os.Getenv(crashHomeEnv)
	if home == "" {
		t.Skip("helper process for TestCrashAfterOutcome")
	}
	scenario := os.Getenv(crashScenarioEnv)
	// The shipped inline budget: the inline scenario crashes inside its race.
	edit := func(c *config.Config) { hearthtest.Trusted(c); hearthtest.ProductionBudget(c) }
	if scenario == "approved" {
		edit = func(c *config.Config) { c.Policy.Mode = config.ModeAsk; hearthtest.ProductionBudget(c) }
	}
	afterFinish := func(a *dispatch.Admission) {
		// The job scenario's submit is journaled too; it crashes in the
		// job's run instead (an attempt of the job's future).
		if scenario == "job" && a.Scheduled {
			crashNow(home, a.FutureID)
		}
		if a.CommandID == crashCmd && scenario != "job" {
			crashNow(home, a.FutureID)
		}
	}
	in := hearthtest.StartHomeWith(t, home, edit, func(o *app.Options) { o.DispatchHooksForTest.AfterFinish = afterFinish })
	ctx := context.Background()
	tool, args := crashCall(scenario, in.Root)
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	spec, input, detach, err := in.App.Registry.Decode(tool, raw)
	if err != nil {
		t.Fatal(err)
	}
	route := mcpserver.Route(map[string]any{"hearth/conversation": crashConv})
	env := in.App.Dispatcher.Call(ctx, dispatch.Request{Route: route, Spec: spec, Input: input, Detach: detach, CommandID: crashCmd})
	if scenario == "approved" {
		if env.PermitID == "" {
			t.Fatalf("ask mode must park the exec for a permit: %+v", env)
		}
		if err := in.App.Operator.Approve(ctx, env.PermitID, "alice", nil); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(30 * time.Second)
	t.Fatalf("the crash hook never ran (%s): %+v", scenario, env)
}

// TestCrashAfterOutcome covers the generic paths that journal a command's
// outcome and complete its future (a detached call, a call that outlived
// the inline budget, an operator-approved permit) and a durable job's run.
// Killed right after the outcome entry is written, Hearth must come back
// with the arrival and a replay of the command id telling the same story,
// the job's state agreeing with its journaled outcomes, and a ledger that
// verifies.
func TestCrashAfterOutcome(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, scenario := range []string{"detached", "inline-race", "approved", "job"} {
		t.Run(scenario, func(t *testing.T) {
			home := t.TempDir()
			id := crashChild(t, "TestOutcomeCrashChild", home, crashHomeEnv+"="+home, crashScenarioEnv+"="+scenario)
			verifyLedger(t, home)

			in := hearthtest.StartHome(t, home, nil)
			c := hearthtest.Connect(t, in.URL, crashConv)
			if scenario == "job" {
				checkJobAfterCrash(t, in, c, id)
			} else {
				checkReplayAgrees(t, in, c, scenario, id)
			}
			in.Stop()
			verifyLedger(t, home)
		})
	}
}

// checkReplayAgrees replays the crashed command id and compares the stored
// outcome with the future's arrival.
func checkReplayAgrees(t *testing.T, in *hearthtest.Instance, c *hearthtest.Client, scenario, futureID string) {
	t.Helper()
	tool, args := crashCall(scenario, in.Root)
	r, err := c.TryCall(tool, args, map[string]any{"hearth/command_id": crashCmd})
	if err != nil {
		t.Fatal(err)
	}
	if r.Get("replayed") != true {
		t.Fatalf("the command id must replay, not run again: %s", r.Raw)
	}
	arr := findArrival(t, c, r, futureID)
	got := [2]any{hearthtest.Get(arr, "envelope.state"), hearthtest.Get(arr, "envelope.error.code")}
	want := [2]any{r.State(), r.Get("error.code")}
	if got != want {
		t.Fatalf("arrival says %v, a replay of %s says %v\narrival: %v\nreplay: %s", got, crashCmd, want, arr, r.Raw)
	}
	// The crash came before the outcome committed: it is unknown, and the
	// conversation's gate names it.
	if want != [2]any{"blocked", "unknown"} {
		t.Fatalf("an outcome that did not commit must be unknown: %s", r.Raw)
	}
	g := c.Call("machine", map[string]any{"operation": "exec", "command": "true"})
	if g.Get("error.code") != "unknown_open" || g.Get("error.details.command_id") != crashCmd {
		t.Fatalf("the gate must be closed naming %s: %s", crashCmd, g.Raw)
	}
}

// findArrival returns the arrival of futureID, from r's arrivals or from
// the next responses of c.
func findArrival(t *testing.T, c *hearthtest.Client, r *hearthtest.Result, futureID string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		for _, a := range r.Arrivals() {
			if a["future_id"] == futureID {
				return a
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no arrival for %s", futureID)
		}
		time.Sleep(30 * time.Millisecond)
		r = c.Call("machine", map[string]any{"operation": "host_info"})
	}
}

// checkJobAfterCrash checks that a job killed right after its run's outcome
// entry was written is settled as interrupted, and that the ledger then
// holds exactly that outcome for it — not a receipt followed by an
// interruption.
func checkJobAfterCrash(t *testing.T, in *hearthtest.Instance, c *hearthtest.Client, jobID string) {
	t.Helper()
	ctx := context.Background()
	route := mcpserver.Route(map[string]any{"hearth/conversation": crashConv})
	j, _, err := in.App.Jobs.Wait(ctx, in.App.Dispatcher, route, jobID, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if j.State != jobs.StateBlocked || j.Outcome != jobs.OutcomeUnknown {
		t.Fatalf("job after the crash: %+v", j)
	}
	entries, err := in.App.Ledger.Tail(ctx, 200)
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, e := range entries {
		var d struct {
			JobID   string `json:"job_id"`
			Outcome string `json:"outcome"`
		}
		if e.Kind == "outcome" && json.Unmarshal(e.Data, &d) == nil && d.JobID == jobID {
			outcomes = append(outcomes, d.Outcome)
		}
	}
	if strings.Join(outcomes, ",") != "unknown" {
		t.Fatalf("journaled outcomes of job %s: %v, want exactly [unknown]", jobID, outcomes)
	}
	arr := findArrival(t, c, c.Call("machine", map[string]any{"operation": "host_info"}), jobID)
	if hearthtest.Get(arr, "envelope.state") != "blocked" || hearthtest.Get(arr, "envelope.error.code") != "unknown" {
		t.Fatalf("job arrival: %v", arr)
	}
}

// crashChild runs the test child as a Hearth on home that SIGKILLs itself
// at a hook, after writing what it was doing (a command or future id) to
// crashMarker; it returns that id, failing the test unless the child died
// by SIGKILL.
func crashChild(t *testing.T, child, home string, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die at the hook: %v\n%s", err, out)
	}
	at, err := os.ReadFile(filepath.Join(home, crashMarker))
	if err != nil {
		t.Fatalf("no crash marker: %v\n%s", err, out)
	}
	return string(at)
}
