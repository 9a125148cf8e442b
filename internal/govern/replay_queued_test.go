//go:build !windows

package govern_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// appendExec is a detached machine.exec that appends one line to file:
// the number of lines counts how often it really ran.
func appendExec(file string, detach bool) map[string]any {
	args := map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", `echo ran >> "$0"`, file}}
	if detach {
		args["detach"] = true
	}
	return args
}

func runsOf(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "ran\n")
}

// holdFutureSlot starts a detached call that occupies the only generic
// future slot until the returned release is called, and waits until it
// runs: detached calls made meanwhile stay queued, with no command record.
func holdFutureSlot(t *testing.T, in *hearthtest.Instance, c *hearthtest.Client) (release func()) {
	t.Helper()
	gate := filepath.Join(in.Root, "release-slot")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "sh",
		"args": []string{"-c", `while [ ! -e "$0" ]; do sleep 0.02; done`, gate}, "detach": true})
	id, _ := r.Get("future_id").(string)
	if id == "" {
		t.Fatalf("slot holder: %s", r.Raw)
	}
	route := mcpserver.Route(map[string]any{"hearth/conversation": c.Conversation})
	for deadline := time.Now().Add(10 * time.Second); ; {
		f, err := in.App.Dispatcher.GetFuture(bg, route, id)
		if err != nil {
			t.Fatal(err)
		}
		if f.State == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot holder did not start: %+v", f)
		}
		time.Sleep(10 * time.Millisecond)
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		// Wait on the future's state, not its arrival: reading arrivals
		// here would acknowledge the ones a test is waiting for.
		for deadline := time.Now().Add(10 * time.Second); ; {
			f, err := in.App.Dispatcher.GetFuture(bg, route, id)
			if err != nil {
				t.Fatal(err)
			}
			if dispatch.Settled(f.State) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("slot holder did not finish: %+v", f)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Cleanup(release)
	return release
}

func oneSlot(c *config.Config) {
	hearthtest.Trusted(c)
	c.MaxConcurrentFutures = 1
}

// TestRetryOfAQueuedCallGetsItsFuture: a detached call with command id X
// that is still queued (no intent journaled yet) is the command: a retry
// with X and the same input — detached or not — answers with its future
// instead of running again, another input under X is a conflict, and the
// call runs once. After it ran, a retry still names the same future.
func TestRetryOfAQueuedCallGetsItsFuture(t *testing.T) {
	in := hearthtest.Start(t, oneSlot)
	c := hearthtest.Connect(t, in.URL, "replay-queued")
	route := mcpserver.Route(map[string]any{"hearth/conversation": c.Conversation})
	release := holdFutureSlot(t, in, c)

	counter := filepath.Join(in.Root, "counter")
	x := map[string]any{"hearth/command_id": "cmd-queued-x"}
	first, err := c.TryCall("machine", appendExec(counter, true), x)
	if err != nil {
		t.Fatal(err)
	}
	fid, _ := first.Get("future_id").(string)
	if first.State() != "pending" || fid == "" {
		t.Fatalf("detached call: %s", first.Raw)
	}
	if f, err := in.App.Dispatcher.GetFuture(bg, route, fid); err != nil || f.State != "queued" {
		t.Fatalf("the call must still be queued behind the slot holder: %+v %v", f, err)
	}
	for _, detach := range []bool{true, false} {
		r, err := c.TryCall("machine", appendExec(counter, detach), x)
		if err != nil {
			t.Fatal(err)
		}
		if r.State() != "pending" || r.Get("future_id") != fid || r.Get("replayed") != true || r.Get("command_id") != "cmd-queued-x" {
			t.Fatalf("retry (detach %v) of a queued command must answer with its future %s: %s", detach, fid, r.Raw)
		}
	}
	other := appendExec(filepath.Join(in.Root, "other"), true)
	r, err := c.TryCall("machine", other, x)
	if err != nil {
		t.Fatal(err)
	}
	if r.State() != "conflict" || r.Get("error.code") != "command_id_reused" {
		t.Fatalf("another input under a queued command id must conflict: %s", r.Raw)
	}
	// Another conversation cannot take the id either.
	stranger := hearthtest.Connect(t, in.URL, "replay-stranger")
	if r, err := stranger.TryCall("machine", appendExec(counter, true), x); err != nil || r.State() != "conflict" || strings.Contains(string(r.Raw), fid) {
		t.Fatalf("another conversation reusing the id must conflict, without learning the future: %v %s", err, r.Raw)
	}

	release()
	arr := c.WaitArrival(fid)
	if hearthtest.Get(arr, "envelope.state") != "completed" {
		t.Fatalf("the queued call must run and complete (not end in a conflict): %v", arr)
	}
	if n := runsOf(t, counter); n != 1 {
		t.Fatalf("the command ran %d times, want 1", n)
	}
	// Done: the replay is the journaled outcome, still naming the future.
	r, err = c.TryCall("machine", appendExec(counter, false), x)
	if err != nil {
		t.Fatal(err)
	}
	if r.State() != "completed" || r.Get("replayed") != true || r.Get("future_id") != fid {
		t.Fatalf("retry after completion: %s", r.Raw)
	}
	if r, _ := c.TryCall("machine", other, x); r == nil || r.Get("error.code") != "command_id_reused" {
		t.Fatalf("another input after completion must conflict")
	}
	if _, err := os.Stat(filepath.Join(in.Root, "other")); err == nil {
		t.Fatal("a conflicting input ran")
	}
	if n := runsOf(t, counter); n != 1 {
		t.Fatalf("the command ran %d times after the retries, want 1", n)
	}
}

// TestConcurrentFirstCallsShareOneFuture: several detached calls with one
// new command id at the same moment (a client retrying before its first
// request was answered) all miss the replay lookup; recording the future is
// conditional on the id, so they get one future and run once.
func TestConcurrentFirstCallsShareOneFuture(t *testing.T) {
	in := hearthtest.Start(t, oneSlot)
	c := hearthtest.Connect(t, in.URL, "replay-race")
	release := holdFutureSlot(t, in, c)
	counter := filepath.Join(in.Root, "race-counter")
	const n = 16
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := c.TryCall("machine", appendExec(counter, true), map[string]any{"hearth/command_id": "cmd-race"})
			if err != nil {
				t.Error(err)
				return
			}
			if r.State() != "pending" {
				t.Errorf("call %d: %s", i, r.Raw)
			}
			ids[i], _ = r.Get("future_id").(string)
		})
	}
	wg.Wait()
	for i := range ids {
		if ids[i] == "" || ids[i] != ids[0] {
			t.Fatalf("calls with one command id got futures %v, want one", ids)
		}
	}
	if futures := dispatchtest.CountOfCommand(t, in.App.DB, "cmd-race"); futures != 1 {
		t.Fatalf("futures recorded for the command id: %d, want 1", futures)
	}
	release()
	if arr := c.WaitArrival(ids[0]); hearthtest.Get(arr, "envelope.state") != "completed" {
		t.Fatalf("arrival: %v", arr)
	}
	if got := runsOf(t, counter); got != 1 {
		t.Fatalf("the command ran %d times, want 1", got)
	}
}

// TestRetryOfACancelledQueuedCall: a queued call cancelled before it
// started ended without running; a retry with its command id answers with
// that outcome (cancelled, naming the future) and does not run it.
func TestRetryOfACancelledQueuedCall(t *testing.T) {
	in := hearthtest.Start(t, oneSlot)
	c := hearthtest.Connect(t, in.URL, "replay-cancelled")
	release := holdFutureSlot(t, in, c)
	counter := filepath.Join(in.Root, "cancelled-counter")
	x := map[string]any{"hearth/command_id": "cmd-cancelled"}
	first, err := c.TryCall("machine", appendExec(counter, true), x)
	if err != nil {
		t.Fatal(err)
	}
	fid, _ := first.Get("future_id").(string)
	if r := c.Call("task", map[string]any{"operation": "cancel", "id": fid}); r.Get("result.cancelled") != true {
		t.Fatalf("cancel: %s", r.Raw)
	}
	r, err := c.TryCall("machine", appendExec(counter, true), x)
	if err != nil {
		t.Fatal(err)
	}
	if r.State() != "cancelled" || r.Get("replayed") != true || r.Get("future_id") != fid {
		t.Fatalf("retry of a cancelled command: %s", r.Raw)
	}
	release()
	c.Call("machine", map[string]any{"operation": "host_info"})
	if n := runsOf(t, counter); n != 0 {
		t.Fatalf("a cancelled command ran %d times", n)
	}
}

// TestReplayLookupsUseIndexes: the replay's lookup of a command id's
// permit is an index search, not a scan of every permit (dispatch's tests
// check the lookup of its future).
func TestReplayLookupsUseIndexes(t *testing.T) {
	in := hearthtest.Start(t, nil)
	for q, index := range map[string]string{
		`SELECT id FROM permits WHERE command_id = ? ORDER BY created_at DESC LIMIT 1`: "permits_command",
	} {
		plan, err := in.App.DB.QueryPlan(bg, q, "cmd")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(plan, "; "), "USING INDEX "+index) {
			t.Errorf("%s: plan %q does not use %s", q, plan, index)
		}
	}
}

const (
	claimCrashHomeEnv = "HEARTH_GOVERN_CLAIM_CRASH_HOME"
	claimCrashConv    = "claim-crash"
	claimCrashCmd     = "cmd-claim-crash"
)

// TestClaimCrashChild is the child process of TestCrashBeforeIntent.
func TestClaimCrashChild(t *testing.T) {
	home := os.Getenv(claimCrashHomeEnv)
	if home == "" {
		t.Skip("helper process for TestCrashBeforeIntent")
	}
	claimed := func(a *dispatch.Admission) {
		if a.CommandID == claimCrashCmd {
			crashNow(home, a.FutureID)
		}
	}
	in := hearthtest.StartHomeWith(t, home, hearthtest.Trusted, func(o *app.Options) { o.DispatchHooksForTest.Claimed = claimed })
	raw, err := json.Marshal(appendExec(filepath.Join(in.Root, "claim-counter"), true))
	if err != nil {
		t.Fatal(err)
	}
	spec, input, detach, err := in.App.Registry.Decode("machine", raw)
	if err != nil {
		t.Fatal(err)
	}
	route := mcpserver.Route(map[string]any{"hearth/conversation": claimCrashConv})
	env := in.App.Dispatcher.Call(context.Background(), dispatch.Request{Route: route, Spec: spec, Input: input, Detach: detach, CommandID: claimCrashCmd})
	time.Sleep(30 * time.Second)
	t.Fatalf("the claim hook never ran: %+v", env)
}

// TestCrashBeforeIntent kills Hearth after a detached call was claimed to
// run but before its intent was journaled. The primitive provably never
// started (nothing runs before its intent commits), so after the restart
// the call is not reported unknown and closes no gate: it runs, once, and
// a retry of its command id answers with that same future.
func TestCrashBeforeIntent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	home := t.TempDir()
	fid := crashChild(t, "TestClaimCrashChild", home, claimCrashHomeEnv+"="+home)
	verifyLedger(t, home)

	in := hearthtest.StartHome(t, home, nil)
	counter := filepath.Join(in.Root, "claim-counter")
	c := hearthtest.Connect(t, in.URL, claimCrashConv)
	arr := c.WaitArrival(fid)
	if hearthtest.Get(arr, "envelope.state") != "completed" {
		t.Fatalf("a call that never started must run after the restart, not arrive unknown: %v", arr)
	}
	if n := runsOf(t, counter); n != 1 {
		t.Fatalf("the command ran %d times, want 1", n)
	}
	r, err := c.TryCall("machine", appendExec(counter, true), map[string]any{"hearth/command_id": claimCrashCmd})
	if err != nil {
		t.Fatal(err)
	}
	if r.State() != "completed" || r.Get("replayed") != true || r.Get("future_id") != fid {
		t.Fatalf("retry after the restart: %s", r.Raw)
	}
	if r := c.Call("machine", map[string]any{"operation": "exec", "command": "true"}); r.State() != "completed" {
		t.Fatalf("no UNKNOWN may close the gate: %s", r.Raw)
	}
	if n := runsOf(t, counter); n != 1 {
		t.Fatalf("the command ran %d times after the retry, want 1", n)
	}
	in.Stop()
	verifyLedger(t, home)
}

// TestRetryDuringTheInlineRace: a retry that arrives while the first call
// is still racing its inline budget (intent journaled, no future yet) must
// not name a future: when the first call then answers inline, the retry
// answers with that outcome, and the command runs once. When the first
// call outlasts the budget instead, the retry names its real future.
func TestRetryDuringTheInlineRace(t *testing.T) {
	for _, tc := range []struct {
		name     string
		budgetMS int
		inline   bool
	}{
		{"answered inline", 60_000, true},
		{"became a future", 100, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := hearthtest.Start(t, func(c *config.Config) {
				hearthtest.Trusted(c)
				c.DispatchInlineBudgetMS = tc.budgetMS
			})
			c := hearthtest.Connect(t, in.URL, "replay-inline")
			route := mcpserver.Route(map[string]any{"hearth/conversation": c.Conversation})
			counter, gate := filepath.Join(in.Root, "counter"), filepath.Join(in.Root, "gate")
			args := map[string]any{"operation": "exec", "command": "sh",
				"args": []string{"-c", `echo ran >> "$0"; while [ ! -e "$1" ]; do sleep 0.02; done`, counter, gate}}
			y := map[string]any{"hearth/command_id": "cmd-inline-y"}

			first := make(chan *hearthtest.Result, 1)
			go func() {
				r, err := c.TryCall("machine", args, y)
				if err != nil {
					t.Error(err)
				}
				first <- r
			}()
			for deadline := time.Now().Add(10 * time.Second); runsOf(t, counter) == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the first call never started")
				}
			}
			retry := make(chan *hearthtest.Result, 1)
			go func() {
				r, err := c.TryCall("machine", args, y)
				if err != nil {
					t.Error(err)
				}
				retry <- r
			}()
			if tc.inline {
				// Let the retry reach the replay lookup while the first
				// call still runs inline, then let the first call finish.
				time.Sleep(300 * time.Millisecond)
			} else {
				// The retry answers as soon as the first call is a future.
				r := <-retry
				fid, _ := r.Get("future_id").(string)
				if r.State() != "pending" || r.Get("replayed") != true || fid == "" {
					t.Fatalf("retry of a call that outlasted its budget: %s", r.Raw)
				}
				if _, err := in.App.Dispatcher.GetFuture(bg, route, fid); err != nil {
					t.Fatalf("the retry named future %s, which does not exist: %v", fid, err)
				}
				retry <- r
			}
			if err := os.WriteFile(gate, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			f, r := <-first, <-retry
			if f == nil || r == nil {
				t.FailNow()
			}
			if tc.inline {
				if f.State() != "completed" || f.Get("future_id") != nil {
					t.Fatalf("first call, inline: %s", f.Raw)
				}
				if r.State() != "completed" || r.Get("replayed") != true || r.Get("future_id") != nil {
					t.Fatalf("a retry during the inline race must answer the inline outcome, naming no future: %s", r.Raw)
				}
			}
			if n := runsOf(t, counter); n != 1 {
				t.Fatalf("the command ran %d times, want 1", n)
			}
		})
	}
}
