//go:build !windows

package jobs_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/govern/governtest"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// runGate is one wired Hearth with a conversation and the job it submits.
type runGate struct {
	t      *testing.T
	in     *hearthtest.Instance
	c      *hearthtest.Client
	route  string
	marker string
	// shell is the program the jobs run ("sh" unless a test names one).
	shell string
}

func newRunGate(t *testing.T, edit func(*config.Config)) *runGate {
	t.Helper()
	needShell(t)
	in := hearthtest.Start(t, edit)
	conv := "run-gate-" + strings.ReplaceAll(t.Name(), "/", "-")
	return &runGate{t: t, in: in, c: hearthtest.Connect(t, in.URL, conv),
		route: mcpserver.Route(map[string]any{"hearth/conversation": conv}), marker: filepath.Join(t.TempDir(), "ran")}
}

// dueAfterChange is the delay of a job whose test changes the policy or
// the rules after submitting it and before it comes due: long enough that
// a loaded machine does the change first (at 400 ms a test saw the job run
// under the old policy).
const dueAfterChange = 1500

// appendRan, as the first argument, makes this test program append
// "ran" to the file named by the second and exit (TestMain): a program a
// rule can cover, unlike a shell.
const appendRan = "append-ran"

// TestMain is the test program, or the job program appendRan asks for.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == appendRan {
		f, err := os.OpenFile(os.Args[2], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			_, err = f.WriteString("ran\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// submit queues a job that appends a line to the marker, due after delay.
func (g *runGate) submit(delayMS int, extra ...any) string {
	g.t.Helper()
	job := with(sh(`echo ran >> "$1"`, "sh", g.marker), append([]any{"delay_ms", delayMS}, extra...)...)
	if g.shell != "" {
		job["command"], job["args"] = g.shell, []any{appendRan, g.marker}
	}
	r := g.c.Call("task", map[string]any{"operation": "submit", "job": job})
	id, _ := r.Get("result.id").(string)
	if r.State() != "completed" || id == "" {
		g.t.Fatalf("submit: %s", r.Raw)
	}
	return id
}

func (g *runGate) runs() int {
	b, err := os.ReadFile(g.marker)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		g.t.Fatal(err)
	}
	return strings.Count(string(b), "ran")
}

// pendingPermit waits for the permit a job's run asked for.
func (g *runGate) pendingPermit(jobID string) govern.Permit {
	g.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		ps, err := g.in.App.Operator.Permits(context.Background(), "pending")
		if err != nil {
			g.t.Fatal(err)
		}
		for _, p := range ps {
			if p.FutureID == jobID {
				return p
			}
		}
	}
	g.t.Fatalf("job %s never asked for a permit", jobID)
	return govern.Permit{}
}

func (g *runGate) waitJob(id string, done func(*jobs.Job) bool) *jobs.Job {
	g.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		j, err := g.in.App.Jobs.Get(context.Background(), g.route, id)
		if err != nil {
			g.t.Fatal(err)
		}
		if done(j) {
			return j
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("job %s: %+v", id, j)
		}
	}
}

func (g *runGate) commandState(cmd string) string {
	return governtest.CommandState(g.t, g.in.App.DB, cmd)
}

// parkedThenApproved checks a due job that now needs a permit: it parks
// (nothing runs, the permit is pending, its arrival says so, no command
// journaled yet); approved, it runs once under its run's command id.
func (g *runGate) parkedThenApproved(id string) {
	g.t.Helper()
	p := g.pendingPermit(id)
	shell := "sh"
	if g.shell != "" {
		shell = g.shell
	}
	if p.Primitive != "task.submit" || p.CommandID != jobs.RunCommandID(id, 1) || !strings.Contains(p.Input, `"command":"`+shell+`"`) {
		g.t.Fatalf("the run's permit: %+v", p)
	}
	arr := g.c.WaitArrival(id)
	if hearthtest.Get(arr, "envelope.state") != "pending" || hearthtest.Get(arr, "envelope.permit_id") != p.ID {
		g.t.Fatalf("the parked job's arrival must say it waits for permit %s: %v", p.ID, arr)
	}
	j := g.waitJob(id, func(j *jobs.Job) bool { return true })
	if j.State != jobs.StateQueued || j.Attempts != 0 || !strings.Contains(j.Reason, p.ID) {
		g.t.Fatalf("a parked job is queued, not started, and says why: %+v", j)
	}
	if n := g.runs(); n != 0 {
		g.t.Fatalf("a job waiting for a permit ran %d times", n)
	}
	if st := g.commandState(jobs.RunCommandID(id, 1)); st != "" {
		g.t.Fatalf("a parked run must not be journaled as begun: %s", st)
	}
	if err := g.in.App.Operator.Approve(context.Background(), p.ID, "alice", nil); err != nil {
		g.t.Fatal(err)
	}
	j = g.waitJob(id, func(j *jobs.Job) bool { return dispatch.Settled(j.State) })
	if j.State != jobs.StateCompleted || j.Attempts != 1 {
		g.t.Fatalf("the approved job: %+v", j)
	}
	if n := g.runs(); n != 1 {
		g.t.Fatalf("the approved job ran %d times, want once", n)
	}
	if st := g.commandState(jobs.RunCommandID(id, 1)); st != "completed" {
		g.t.Fatalf("the run's command: %q", st)
	}
}

// TestDueJobParksWhenPolicyTightened: a delayed job submitted under
// trusted, the policy switched to ask before it is due: it parks for a
// permit instead of running, and runs once when the operator approves.
func TestDueJobParksWhenPolicyTightened(t *testing.T) {
	g := newRunGate(t, trusted)
	id := g.submit(dueAfterChange)
	if err := g.in.App.Operator.SetPolicy(context.Background(), "alice", config.ModeAsk); err != nil {
		t.Fatal(err)
	}
	g.parkedThenApproved(id)
}

// TestApprovedJobNoLongerSaysItWaits: once the operator approves the
// permit a parked job waited for, task.get stops saying it waits for one,
// queued or running (the reason is checked while the job runs, held there
// by a gate file).
func TestApprovedJobNoLongerSaysItWaits(t *testing.T) {
	g := newRunGate(t, trusted)
	gate := filepath.Join(t.TempDir(), "gate")
	job := with(sh(`echo ran >> "$1"; while [ ! -f "$2" ]; do sleep 0.02; done`, "sh", g.marker, gate), "delay_ms", dueAfterChange)
	r := g.c.Call("task", map[string]any{"operation": "submit", "job": job})
	id, _ := r.Get("result.id").(string)
	if id == "" {
		t.Fatalf("submit: %s", r.Raw)
	}
	ctx := context.Background()
	if err := g.in.App.Operator.SetPolicy(ctx, "alice", config.ModeAsk); err != nil {
		t.Fatal(err)
	}
	p := g.pendingPermit(id)
	if j := g.waitJob(id, func(*jobs.Job) bool { return true }); !strings.Contains(j.Reason, "waiting for operator permit "+p.ID) {
		t.Fatalf("the parked job's reason: %q", j.Reason)
	}
	if err := g.in.App.Operator.Approve(ctx, p.ID, "alice", nil); err != nil {
		t.Fatal(err)
	}
	check := func(j *jobs.Job) {
		t.Helper()
		if strings.Contains(j.Reason, "waiting for operator permit") || !strings.Contains(j.Reason, "approved by the operator") {
			t.Fatalf("after approval, %s job's reason: %q", j.State, j.Reason)
		}
	}
	check(g.waitJob(id, func(*jobs.Job) bool { return true }))
	// The job is read after its process has written its line (a job read
	// first could be from before its claim): by then it must be running.
	for deadline := time.Now().Add(30 * time.Second); g.runs() != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the approved job never ran")
		}
	}
	j := g.waitJob(id, func(*jobs.Job) bool { return true })
	if j.State != jobs.StateRunning {
		t.Fatalf("the approved job, started: %+v", j)
	}
	check(j)
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if j := g.waitJob(id, func(j *jobs.Job) bool { return dispatch.Settled(j.State) }); j.State != jobs.StateCompleted || j.Reason != "" {
		t.Fatalf("the approved job, ended: %+v", j)
	}
}

// TestDueJobParksWhenRuleRemoved: submitted under ask, allowed by a rule;
// the rule removed before it is due, its run needs a permit.
func TestDueJobParksWhenRuleRemoved(t *testing.T) {
	g := newRunGate(t, nil)
	ctx := context.Background()
	// No rule covers a shell, even under another name (it asks every
	// time): the job runs this test program, which appends the line itself
	// (TestMain), and which a rule for its path and the job's exact
	// arguments covers.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	g.shell = self
	rule, err := g.in.App.Operator.AddRule(ctx, "alice", g.shell, "", appendRan, g.marker)
	if err != nil {
		t.Fatal(err)
	}
	id := g.submit(dueAfterChange)
	if err := g.in.App.Operator.RemoveRule(ctx, "alice", rule.ID); err != nil {
		t.Fatal(err)
	}
	g.parkedThenApproved(id)
}

// TestApprovedSubmitCoversItsRun: a submit the operator approved is not
// asked about again when its job comes due (the operator saw the job).
func TestApprovedSubmitCoversItsRun(t *testing.T) {
	g := newRunGate(t, nil)
	job := with(sh(`echo ran >> "$1"`, "sh", g.marker), "delay_ms", 200)
	r := g.c.Call("task", map[string]any{"operation": "submit", "job": job})
	pid, _ := r.Get("permit_id").(string)
	if r.State() != "pending" || pid == "" {
		t.Fatalf("under ask a submit waits for a permit: %s", r.Raw)
	}
	if err := g.in.App.Operator.Approve(context.Background(), pid, "alice", nil); err != nil {
		t.Fatal(err)
	}
	env, _ := g.c.WaitArrival(r.Get("future_id").(string), r)["envelope"].(map[string]any)
	id, _ := hearthtest.Get(env, "result.id").(string)
	if id == "" {
		t.Fatalf("approved submit: %v", env)
	}
	j := g.waitJob(id, func(j *jobs.Job) bool { return dispatch.Settled(j.State) })
	if j.State != jobs.StateCompleted || g.runs() != 1 {
		t.Fatalf("the approved submit's job: %+v, ran %d", j, g.runs())
	}
	if ps, _ := g.in.App.Operator.Permits(context.Background(), "pending"); len(ps) != 0 {
		t.Fatalf("the run asked again: %+v", ps)
	}
}

// TestDueJobDeniedIsBlocked: a denied run permit blocks the job and its
// dependent, with the reason, and nothing runs.
func TestDueJobDeniedIsBlocked(t *testing.T) {
	g := newRunGate(t, trusted)
	id := g.submit(dueAfterChange)
	dep := g.submit(0, "dependencies", []any{id})
	if err := g.in.App.Operator.SetPolicy(context.Background(), "alice", config.ModeAsk); err != nil {
		t.Fatal(err)
	}
	p := g.pendingPermit(id)
	if err := g.in.App.Operator.Deny(context.Background(), p.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	j := g.waitJob(id, func(j *jobs.Job) bool { return dispatch.Settled(j.State) })
	if j.State != jobs.StateBlocked || !strings.Contains(j.Reason, "denied") {
		t.Fatalf("denied: %+v", j)
	}
	d := g.waitJob(dep, func(j *jobs.Job) bool { return dispatch.Settled(j.State) })
	if d.State != jobs.StateBlocked || !strings.Contains(d.Reason, id) {
		t.Fatalf("the dependent of a denied job: %+v", d)
	}
	if g.runs() != 0 {
		t.Fatalf("a denied job ran")
	}
}

// The held-job tests submit a job due in 1.5 s and open the UNKNOWN
// before it comes due (an UNKNOWN opened first would refuse the submit
// itself); 1.5 s leaves room for a slow race-detector run.

// TestDueJobHeldByOpenUnknown: an UNKNOWN opened in the conversation
// after the submit refuses the run when it comes due, as it refuses a
// fresh call; but the job does not end blocked for good: it waits, held
// (not counted as an attempt), and runs once the model reconciles the
// UNKNOWN.
func TestDueJobHeldByOpenUnknown(t *testing.T) {
	g := newRunGate(t, trusted)
	id := g.submit(1500)
	const unknown = "cmd-unknown-before-due"
	err := g.in.App.DB.InTx(context.Background(), func(tx *sql.Tx) error {
		return governtest.OpenUnknownTx(context.Background(), tx, unknown, g.route, "machine.exec", time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	g.waitHeld(id)
	j := g.waitJob(id, func(j *jobs.Job) bool { return true })
	if j.State != jobs.StateQueued || !strings.HasPrefix(j.Reason, "held:") || !strings.Contains(j.Reason, unknown) || j.Attempts != 0 {
		t.Fatalf("a job due under an open UNKNOWN must wait, held, naming it: %+v", j)
	}
	time.Sleep(300 * time.Millisecond)
	if g.runs() != 0 || g.futureState(id) != "held" {
		t.Fatal("a held job ran, or was claimed again while the UNKNOWN is open")
	}
	r := g.c.Call("task", map[string]any{"operation": "reconcile", "id": unknown, "observed": "re-read: nothing changed"})
	if r.IsError || r.Get("result.reconciled") != unknown {
		t.Fatalf("reconcile: %s", r.Raw)
	}
	if j := g.waitJob(id, func(j *jobs.Job) bool { return dispatch.Settled(j.State) }); j.State != jobs.StateCompleted || j.Attempts != 1 {
		t.Fatalf("once the UNKNOWN is reconciled the held job runs: %+v", j)
	}
	if n := g.runs(); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
}

// TestHeldJobCancelledByReconcile: a reconcile that says held: cancel
// cancels the jobs the UNKNOWN held (they never run), and its answer
// names them; a job of another conversation is not touched.
func TestHeldJobCancelledByReconcile(t *testing.T) {
	g := newRunGate(t, trusted)
	id := g.submit(1500)
	const unknown = "cmd-unknown-cancel"
	err := g.in.App.DB.InTx(context.Background(), func(tx *sql.Tx) error {
		return governtest.OpenUnknownTx(context.Background(), tx, unknown, g.route, "machine.exec", time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	g.waitHeld(id)
	r := g.c.Call("task", map[string]any{"operation": "reconcile", "id": unknown, "observed": "the change happened", "held": "cancel"})
	if r.IsError || fmt.Sprint(r.Get("result.held_jobs_cancelled")) != "["+id+"]" {
		t.Fatalf("reconcile with held cancel must name the cancelled job: %s", r.Raw)
	}
	j := g.waitJob(id, func(j *jobs.Job) bool { return dispatch.Settled(j.State) })
	if j.State != jobs.StateCancelled || !strings.Contains(j.Reason, unknown) {
		t.Fatalf("the held job must end cancelled by the reconcile: %+v", j)
	}
	time.Sleep(200 * time.Millisecond)
	if g.runs() != 0 {
		t.Fatal("a job cancelled by the reconcile ran")
	}
}

// TestHeldJobReleasedByOperatorReconcile: the operator's reconcile (the
// Safety page) releases the jobs the UNKNOWN held as the model's does.
func TestHeldJobReleasedByOperatorReconcile(t *testing.T) {
	g := newRunGate(t, trusted)
	id := g.submit(1500)
	const unknown = "cmd-unknown-operator"
	err := g.in.App.DB.InTx(context.Background(), func(tx *sql.Tx) error {
		return governtest.OpenUnknownTx(context.Background(), tx, unknown, g.route, "machine.exec", time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	g.waitHeld(id)
	if err := g.in.App.Operator.Reconcile(context.Background(), "alice", unknown, "checked the machine"); err != nil {
		t.Fatal(err)
	}
	if j := g.waitJob(id, func(j *jobs.Job) bool { return dispatch.Settled(j.State) }); j.State != jobs.StateCompleted {
		t.Fatalf("the operator's reconcile must release the held job: %+v", j)
	}
	if n := g.runs(); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
}

// TestHeldJobReleasedAtStart: a reconcile committed whose release never
// happened (a crash between the two, made here by closing the UNKNOWN in
// the database while Hearth is stopped) holds nothing for good: the next
// start admits the held job afresh, and it runs.
func TestHeldJobReleasedAtStart(t *testing.T) {
	g := newRunGate(t, trusted)
	id := g.submit(1500)
	const unknown = "cmd-unknown-restart"
	err := g.in.App.DB.InTx(context.Background(), func(tx *sql.Tx) error {
		return governtest.OpenUnknownTx(context.Background(), tx, unknown, g.route, "machine.exec", time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	g.waitHeld(id)
	governtest.MarkUnknownReconciled(t, g.in.App.DB.W, unknown)
	home := g.in.Home
	g.in.Stop()
	g.in = hearthtest.StartHome(t, home, nil)
	if j := g.waitJob(id, func(j *jobs.Job) bool { return dispatch.Settled(j.State) }); j.State != jobs.StateCompleted {
		t.Fatalf("a job left held by a reconcile whose release was cut short must run after a start: %+v", j)
	}
	if n := g.runs(); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
}

// waitHeld waits until future id is held for an UNKNOWN.
func (g *runGate) waitHeld(id string) {
	g.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); g.futureState(id) != "held"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			g.t.Fatalf("job %s never held: %s", id, g.futureState(id))
		}
	}
}

func (g *runGate) futureState(id string) string {
	return dispatchtest.State(g.t, g.in.App.DB, id)
}

// TestCancelParkedJobWithdrawsPermit: task.cancel of a job parked for a
// permit cancels it and withdraws the permit; approving it then fails.
func TestCancelParkedJobWithdrawsPermit(t *testing.T) {
	g := newRunGate(t, trusted)
	id := g.submit(dueAfterChange)
	if err := g.in.App.Operator.SetPolicy(context.Background(), "alice", config.ModeAsk); err != nil {
		t.Fatal(err)
	}
	p := g.pendingPermit(id)
	r := g.c.Call("task", map[string]any{"operation": "cancel", "id": id})
	if r.Get("result.job.state") != jobs.StateCancelled || r.Get("result.cancelled") != true {
		t.Fatalf("cancel a parked job: %s", r.Raw)
	}
	if ps, _ := g.in.App.Operator.Permits(context.Background(), "pending"); len(ps) != 0 {
		t.Fatalf("the permit of a cancelled job is still pending: %+v", ps)
	}
	if err := g.in.App.Operator.Approve(context.Background(), p.ID, "alice", nil); err == nil {
		t.Fatal("approving a withdrawn permit must fail")
	}
	if g.runs() != 0 {
		t.Fatal("a cancelled job ran")
	}
}

// TestSiblingUnknownDoesNotRefuseItsBatch is the one named difference of
// a run's UNKNOWN gate: an UNKNOWN opened by a job of the same submit (as
// the interruption of an on_interrupt "block" job opens one) does not
// refuse its siblings; a job of another submit is refused by it.
func TestSiblingUnknownDoesNotRefuseItsBatch(t *testing.T) {
	g := newRunGate(t, trusted)
	job := func(delay int) map[string]any {
		return with(sh(`echo ran >> "$1"`, "sh", g.marker), "delay_ms", delay)
	}
	// The sibling and the other submit's job wait 5 s: the UNKNOWN below
	// is open before either is due even on a loaded machine (with 400 ms,
	// the other job once ran before it was opened, and the sibling then
	// passes without proving anything).
	r := g.c.Call("task", map[string]any{"operation": "submit", "jobs": []any{job(60000), job(5000)}})
	ids, _ := r.Get("result.ids").([]any)
	if len(ids) != 2 {
		t.Fatalf("submit: %s", r.Raw)
	}
	interrupted, sibling := ids[0].(string), ids[1].(string)
	other := g.submit(5000)
	err := g.in.App.DB.InTx(context.Background(), func(tx *sql.Tx) error {
		return governtest.OpenUnknownTx(context.Background(), tx, interrupted, g.route, "task.submit", time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	if j := g.waitJob(sibling, func(j *jobs.Job) bool { return dispatch.Settled(j.State) }); j.State != jobs.StateCompleted {
		t.Fatalf("a sibling of the job whose outcome is UNKNOWN: %+v", j)
	}
	g.waitHeld(other)
	if j := g.waitJob(other, func(j *jobs.Job) bool { return true }); j.State != jobs.StateQueued || !strings.Contains(j.Reason, interrupted) {
		t.Fatalf("a job of another submit must be held by the UNKNOWN: %+v", j)
	}
	if n := g.runs(); n != 1 {
		t.Fatalf("%d runs, want the sibling's only", n)
	}
}
