package dispatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/govern/governtest"
	"github.com/hearth-dev/hearth/internal/ledger/ledgertest"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// probeRunner is a class runner whose runs record when they start and
// last until released (or stopped).
type probeRunner struct {
	mu       sync.Mutex
	starts   map[string][]time.Time
	requeued map[string]int
	release  chan struct{}
	// parkErr, when set, is what Parked returns (a failure after the
	// permit was asked for, inside the same transaction).
	parkErr error
	// errs holds what a released run of a future returns instead of its
	// result.
	errs map[string]error
}

func (p *probeRunner) Run(ctx context.Context, call *primitive.Call) (any, error) {
	p.mu.Lock()
	p.starts[call.FutureID] = append(p.starts[call.FutureID], time.Now())
	p.mu.Unlock()
	select {
	case <-p.release:
		p.mu.Lock()
		err := p.errs[call.FutureID]
		p.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return map[string]any{"ran": call.CommandID}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *probeRunner) Ended(_ context.Context, id string, env *Envelope, _ any) (func(context.Context, *sql.Tx) error, error) {
	env.Result = map[string]any{"id": id, "view": env.State}
	return nil, nil
}

func (p *probeRunner) Parked(context.Context, *sql.Tx, string, string) error { return p.parkErr }

func (p *probeRunner) Released(context.Context, *sql.Tx, string) error     { return nil }
func (p *probeRunner) Held(context.Context, *sql.Tx, string, string) error { return nil }

func (p *probeRunner) Requeued(_ context.Context, _ *sql.Tx, id string, attempt int) error {
	p.mu.Lock()
	p.requeued[id] = attempt
	p.mu.Unlock()
	return nil
}

func (p *probeRunner) DependencyBlocked(_ context.Context, dep, depState string) *primitive.Error {
	return primitive.Blocked("dependency", "dependency %s %s", dep, depState)
}

func (p *probeRunner) started(id string) []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.starts[id]...)
}

// waitStarted polls (bounded) until id's run has started n times.
func (p *probeRunner) waitStarted(t *testing.T, id string, n int) []time.Time {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if s := p.started(id); len(s) >= n {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("future %s never started %d times", id, n)
		}
	}
}

// scheduleFixture is a dispatcher with one class, "probe", on a real
// database and the real governor.
type scheduleFixture struct {
	t      *testing.T
	db     *store.DB
	gov    *govern.Governor
	reg    *primitive.Registry
	runner *probeRunner
	slots  int
	d      *Dispatcher
	// held, when set, is the class's Held.
	held func(context.Context) (bool, error)
}

func newScheduleFixture(t *testing.T, slots int, opts ...func(*scheduleFixture)) *scheduleFixture {
	t.Helper()
	db := openTestDB(t)
	run := func(context.Context, *primitive.Call, json.RawMessage) (any, error) { return nil, nil }
	// t.probe needs no permit in any mode that runs; t.probe_kill always
	// needs one.
	reg, err := primitive.NewRegistry(&primitive.Spec{Tool: "t", Operation: "probe", Risk: primitive.RiskWrite, Run: run},
		&primitive.Spec{Tool: "t", Operation: "probe_kill", Risk: primitive.RiskKill, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	f := &scheduleFixture{t: t, db: db, gov: testGovernor(t, db), reg: reg, slots: slots}
	for _, o := range opts {
		o(f)
	}
	f.start()
	return f
}

// start builds and starts a dispatcher on f.db, as a fresh process would.
func (f *scheduleFixture) start() {
	f.t.Helper()
	f.runner = &probeRunner{starts: map[string][]time.Time{}, requeued: map[string]int{}, release: make(chan struct{}), errs: map[string]error{}}
	d, err := New(Options{DB: f.db, Registry: f.reg, Gov: f.gov, MaxFutures: 4, Budget: 100 * time.Millisecond, MaxResultBytes: 1 << 20,
		MaxArrivals: 100, MaxArrivalBytes: 1 << 20, Classes: []Class{{Name: "probe", Slots: f.slots, Runner: f.runner, Held: f.held}}})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	f.d = d
	f.t.Cleanup(d.Stop)
}

// schedule admits one probe future and wakes the class. All are queued
// by one parent command, so an UNKNOWN one of them opens does not refuse
// the others (callpath.Admission.Scheduled).
func (f *scheduleFixture) schedule(runAt time.Time, rule string, deps ...string) string {
	f.t.Helper()
	id := primitive.NewID("fut")
	err := f.db.InTx(context.Background(), func(tx *sql.Tx) error {
		return ScheduleTx(context.Background(), tx, Scheduled{ID: id, Route: testRoute, Primitive: "t.probe", Input: json.RawMessage(`{}`),
			Class: "probe", RunAt: runAt, OnInterrupt: rule, Parent: "cmd_probe_parent", Deps: deps, Waiting: len(deps) > 0})
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.d.Wake("probe")
	return id
}

// registerClaim registers, as a claim of the probe class would before its
// transaction commits, one attempt of future id (which need not exist).
func (f *scheduleFixture) registerClaim(id string) []claimed {
	f.t.Helper()
	spec, _ := f.reg.Lookup("t.probe")
	a := NewAdmission(Request{Route: "r", Spec: spec, Input: json.RawMessage(`{}`), CommandID: id + "/run1"}, id)
	var out []claimed
	if err := f.d.classes["probe"].register([]claimed{{a: a}}, &out); err != nil {
		f.t.Fatal(err)
	}
	return out
}

type futureRecord struct {
	state, outcome          string
	attempts, interruptions int
	commandID               string
	startedAt               sql.NullInt64
	result                  sql.NullString
	commandState            string // its journaled command's state, "" when none is
}

func (f *scheduleFixture) record(id string) futureRecord {
	f.t.Helper()
	var r futureRecord
	var outcome sql.NullString
	err := f.db.R.QueryRow(`SELECT state, outcome, attempts, interruptions, COALESCE(command_id, ''), started_at, result FROM futures WHERE id = ?`, id).
		Scan(&r.state, &outcome, &r.attempts, &r.interruptions, &r.commandID, &r.startedAt, &r.result)
	if err != nil {
		f.t.Fatal(err)
	}
	r.outcome = outcome.String
	r.commandState = governtest.CommandState(f.t, f.db, r.commandID)
	return r
}

// waitFor polls (bounded) until done holds for future id's record.
func (f *scheduleFixture) waitFor(id string, what string, done func(futureRecord) bool) futureRecord {
	f.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r := f.record(id)
		if done(r) {
			return r
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("future %s never %s: %+v", id, what, r)
		}
	}
}

func isState(s string) func(futureRecord) bool {
	return func(r futureRecord) bool { return r.state == s }
}

// TestScheduledFutureRunsWhenDue: a scheduled future is not started before
// its due time, starts after it, counts its attempt, and is journaled under
// the attempt's command id with a commands row whose outcome is the one
// that arrives.
func TestScheduledFutureRunsWhenDue(t *testing.T) {
	f := newScheduleFixture(t, 2)
	due := time.Now().Add(400 * time.Millisecond)
	id := f.schedule(due, OnInterruptRequeue)
	starts := f.runner.waitStarted(t, id, 1)
	if r := f.record(id); r.state != "running" || len(starts) != 1 || starts[0].Before(due) {
		t.Fatalf("a future due at %v started at %v", due, starts)
	}
	close(f.runner.release)
	r := f.waitFor(id, "completed", isState("completed"))
	if r.attempts != 1 || r.commandID != RunCommandID(id, 1) || r.commandState != "completed" {
		t.Fatalf("the completed future: %+v", r)
	}
	arr, err := f.d.Deliver(context.Background(), testRoute, "fp-1")
	if err != nil || len(arr) != 1 || arr[0].FutureID != id {
		t.Fatalf("arrivals: %+v %v", arr, err)
	}
	var env Envelope
	if err := json.Unmarshal(arr[0].Envelope, &env); err != nil || env.State != "completed" || env.CommandID != RunCommandID(id, 1) {
		t.Fatalf("the arrival: %s", arr[0].Envelope)
	}
	if res, _ := env.Result.(map[string]any); res["view"] != "completed" {
		t.Fatalf("the arrival does not carry the runner's view: %s", arr[0].Envelope)
	}
}

// TestScheduledClassSlots: a class runs at most its slots at once, and the
// rest start as slots free.
func TestScheduledClassSlots(t *testing.T) {
	f := newScheduleFixture(t, 2)
	var all []string
	for range 5 {
		all = append(all, f.schedule(time.Now(), OnInterruptRequeue))
	}
	running := func() int {
		n := 0
		for _, id := range all {
			if f.record(id).state == "running" {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(20 * time.Second); running() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("two futures never started")
		}
	}
	time.Sleep(200 * time.Millisecond)
	if n := running(); n != 2 {
		t.Fatalf("%d futures of a class with 2 slots running", n)
	}
	close(f.runner.release)
	for _, id := range all {
		f.waitFor(id, "completed", isState("completed"))
	}
}

// TestScheduledInterruptionRules stops the engine while two attempts run
// (a shutdown leaves them running, as a crash would) and starts a new one:
// the "requeue" future runs again with its interruption counted; the
// "block" one ends blocked with outcome unknown, never run again, and its
// waiting dependent is blocked naming it, in its class's words.
func TestScheduledInterruptionRules(t *testing.T) {
	f := newScheduleFixture(t, 4)
	requeue := f.schedule(time.Now(), OnInterruptRequeue)
	block := f.schedule(time.Now(), OnInterruptBlock)
	dependent := f.schedule(time.Now(), OnInterruptRequeue, block)
	f.runner.waitStarted(t, requeue, 1)
	f.runner.waitStarted(t, block, 1)
	if r := f.record(dependent); r.state != StateWaiting {
		t.Fatalf("the dependent of a running future: %+v", r)
	}
	f.d.Stop()
	if err := f.gov.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.start()
	close(f.runner.release)

	r := f.waitFor(requeue, "completed again", isState("completed"))
	if r.attempts != 2 || r.interruptions != 1 || r.commandID != RunCommandID(requeue, 2) || len(f.runner.started(requeue)) != 1 {
		t.Fatalf("the requeued future: %+v, started %d times since the restart", r, len(f.runner.started(requeue)))
	}
	if at := f.runner.requeued[requeue]; at != 1 {
		t.Fatalf("the runner was told of the requeue of attempt %d, want 1", at)
	}
	b := f.waitFor(block, "blocked", isState("blocked"))
	if b.outcome != "unknown" || b.interruptions != 1 || len(f.runner.started(block)) != 0 {
		t.Fatalf("the blocked future: %+v", b)
	}
	dep := f.waitFor(dependent, "blocked", isState("blocked"))
	var env Envelope
	if err := json.Unmarshal([]byte(dep.result.String), &env); err != nil || env.Error == nil || env.Error.Code != "dependency" ||
		env.Error.Message != "dependency "+block+" blocked" {
		t.Fatalf("the dependent of the blocked future: %s", dep.result.String)
	}
	// The governor's one recovery settled both interrupted commands as
	// unknown; only the "block" rule closed the conversation's gate, naming
	// the future.
	gates := governtest.OpenUnknowns(t, f.db)
	if len(gates) != 1 || gates[0] != block {
		t.Fatalf("open UNKNOWNs after the restart: %v, want only %s", gates, block)
	}
}

// TestScheduledQueriesUseTheirIndexes: what runs on every completion and
// every scheduling turn reaches a future's own dependents and a class's
// queued futures through their indexes, never through every waiting or
// queued future (a 1000-job chain holds 999 waiting ones).
func TestScheduledQueriesUseTheirIndexes(t *testing.T) {
	f := newScheduleFixture(t, 1)
	for _, tc := range []struct {
		query, index string
		args         []any
	}{
		{dependentsQuery, "future_deps_dep", []any{"fut_x"}},
		{releaseQuery, "future_deps_dep", []any{"fut_x"}},
		{dueQuery, "futures_due", []any{"job", 0, 1}},
		{nextDueQuery, "futures_due", []any{"job", 0}},
	} {
		plan, err := f.db.QueryPlan(context.Background(), tc.query, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		p := strings.Join(plan, "; ")
		if !strings.Contains(p, "INDEX "+tc.index) || strings.Contains(p, "futures_state") {
			t.Errorf("%s\nplan %q: want %s, never futures_state", tc.query, p, tc.index)
		}
	}
}

// TestNewRefusesAnIncompleteClass: a class without a name or a runner, or
// one given twice, is refused when the dispatcher is built, naming what
// is wrong, instead of scheduling futures nothing can run.
func TestNewRefusesAnIncompleteClass(t *testing.T) {
	db := openTestDB(t)
	reg, err := primitive.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	r := &probeRunner{}
	for _, tc := range []struct {
		want    string
		classes []Class
	}{
		{"no Name", []Class{{Runner: r}}},
		{"no Runner", []Class{{Name: "probe"}}},
		{"given twice", []Class{{Name: "probe", Runner: r}, {Name: "probe", Runner: r}}},
	} {
		_, err := New(Options{DB: db, Registry: reg, Gov: testGovernor(t, db), MaxFutures: 1, Classes: tc.classes})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("classes %+v: want an error saying %q, got %v", tc.classes, tc.want, err)
		}
	}
	if _, err := New(Options{DB: db, Registry: reg, Gov: testGovernor(t, db), MaxFutures: 1, Classes: []Class{{Name: "probe", Runner: r}}}); err != nil {
		t.Fatalf("a complete class: %v", err)
	}
}

// TestUnservedClassIsNotReleasedAsACall: an approved future of a class
// the dispatcher does not run (a job, with no job class) is refused, not
// run as a plain call of its primitive, and stays parked.
func TestUnservedClassIsNotReleasedAsACall(t *testing.T) {
	f := newScheduleFixture(t, 1)
	id := f.schedule(time.Now().Add(time.Hour), OnInterruptRequeue)
	f.d.Stop()
	if _, err := f.db.W.Exec(`UPDATE futures SET state = 'permit' WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{DB: f.db, Registry: f.reg, Gov: f.gov, MaxFutures: 4, Budget: 100 * time.Millisecond, MaxResultBytes: 1 << 20,
		MaxArrivals: 100, MaxArrivalBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	err = d.ReleaseApproved(context.Background(), id)
	if err == nil || !strings.Contains(err.Error(), `class "probe"`) {
		t.Fatalf("releasing a future of a class nobody runs: %v", err)
	}
	if r := f.record(id); r.state != "permit" {
		t.Fatalf("the refused future: %+v", r)
	}
}

// TestParkIsOneCommit: when recording a park fails after the permit was
// asked for (the runner's step, inside the same transaction), nothing of
// the park is left: no permit for the operator to approve, no
// permit_requested entry, the attempt not left parked; the future ends
// failed, saying it never started.
func TestParkIsOneCommit(t *testing.T) {
	f := newScheduleFixture(t, 1)
	f.runner.parkErr = errors.New("disk full")
	ctx := context.Background()
	entries := ledgertest.Count(t, f.db, "permit_requested")
	id := primitive.NewID("fut")
	err := f.db.InTx(ctx, func(tx *sql.Tx) error {
		return ScheduleTx(ctx, tx, Scheduled{ID: id, Route: testRoute, Primitive: "t.probe_kill", Input: json.RawMessage(`{}`),
			Class: "probe", RunAt: time.Now(), OnInterrupt: "requeue", Parent: "cmd_probe_parent"})
	})
	if err != nil {
		t.Fatal(err)
	}
	f.d.Wake("probe")
	r := f.waitFor(id, "failed", func(r futureRecord) bool { return r.state == primitive.StateFailed })
	if !strings.Contains(r.result.String, "journal_failed") || !strings.Contains(r.result.String, "did not start") {
		t.Fatalf("the future whose park failed: %+v", r)
	}
	permits := governtest.PermitsOf(t, f.db, id)
	after := ledgertest.Count(t, f.db, "permit_requested")
	if permits != 0 || after != entries {
		t.Fatalf("a park that failed left %d permits and %d permit_requested entries", permits, after-entries)
	}
	if n := len(f.runner.started(id)); n != 0 {
		t.Fatalf("the future ran %d times", n)
	}
}

// TestShutdownDuringAHandOffStartsNothing: the end of A hands its slot to
// B (one slot); Hearth begins shutting down while that claim is being
// made. B must not be left journaled as begun but never started (which
// the next start would settle as an interruption: blocked, outcome
// unknown, the conversation's gate closed, under on_interrupt "block"): it
// is still queued, unattempted, and runs once at the next start.
func TestShutdownDuringAHandOffStartsNothing(t *testing.T) {
	f := newScheduleFixture(t, 1)
	a := f.schedule(time.Now(), OnInterruptRequeue)
	f.runner.waitStarted(t, a, 1)
	b := f.schedule(time.Now(), OnInterruptBlock)
	d := f.d
	d.seams.hooks.Claimed = func(ad *Admission) {
		if ad.FutureID == b {
			d.cancel() // Stop lands while A's end claims B
		}
	}
	close(f.runner.release)
	f.waitFor(a, "completed", isState("completed"))
	d.Stop()
	if r := f.record(b); r.state != "queued" || r.attempts != 0 || r.commandState != "" {
		t.Fatalf("B after a shutdown during its claim: %+v", r)
	}
	if err := f.gov.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.start()
	close(f.runner.release)
	r := f.waitFor(b, "completed", isState("completed"))
	if r.attempts != 1 || r.interruptions != 0 || r.outcome != "" {
		t.Fatalf("B after the restart: %+v", r)
	}
	if open := governtest.OpenUnknowns(t, f.db); len(open) != 0 {
		t.Fatalf("open UNKNOWNs after the restart: %v", open)
	}
}

// TestStopRunOfAClaimThatDidNotCommit: a task.cancel that found a claim
// in flight, whose transaction then failed, is not left waiting for a run
// that will never start.
func TestStopRunOfAClaimThatDidNotCommit(t *testing.T) {
	f := newScheduleFixture(t, 1)
	c := f.d.classes["probe"]
	out := f.registerClaim("fut_x")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	returned := make(chan bool, 1)
	go func() { returned <- f.d.StopRun(ctx, "probe", "fut_x", Stop{Why: "cancelled by the test"}) }()
	for deadline := time.Now().Add(20 * time.Second); out[0].ctx.Err() == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("StopRun never stopped the registered claim")
		}
	}
	c.unregister(&out) // the claim's transaction failed
	select {
	case found := <-returned:
		if !found {
			t.Fatal("StopRun did not find the claim")
		}
	case <-ctx.Done():
		t.Fatal("StopRun still waits for a claim that never committed")
	}
}

// TestNoHandOffAfterAnUnknownOutcome: A's run ends with an outcome that
// opens an UNKNOWN in its conversation. The slot it frees is not handed to
// B inside that commit, whose gate would read the state before it: B is
// admitted after the commit, and held by A's UNKNOWN (held.go).
func TestNoHandOffAfterAnUnknownOutcome(t *testing.T) {
	f := newScheduleFixture(t, 1)
	a := f.schedule(time.Now(), OnInterruptRequeue)
	f.runner.waitStarted(t, a, 1)
	b := f.schedule(time.Now(), OnInterruptRequeue)
	f.runner.mu.Lock()
	f.runner.errs[a] = &primitive.Error{State: primitive.StateBlocked, Code: "unknown", Message: "the probe cannot tell what it did"}
	f.runner.mu.Unlock()
	close(f.runner.release)
	f.waitFor(a, "ended", isState(primitive.StateBlocked))
	r := f.waitFor(b, "ended", func(r futureRecord) bool { return r.state != "queued" && r.state != "running" })
	if n := len(f.runner.started(b)); n != 0 || r.state != StateHeld || r.attempts != 0 {
		t.Fatalf("B after A's UNKNOWN: ran %d times, %+v", n, r)
	}
}

// TestEStopBetweenTheHoldReadAndTheClaim: the operator's e-stop commits
// just after the scheduler read the queue's hold, before its claim. The
// due future must stay queued for the resume, not be claimed and refused
// for the e-stop: the claim reads the hold again inside its transaction.
func TestEStopBetweenTheHoldReadAndTheClaim(t *testing.T) {
	var armed, latched atomic.Bool
	var due atomic.Int64 // unix ms
	var afterLatch atomic.Int32
	f := newScheduleFixture(t, 1, func(f *scheduleFixture) {
		f.held = func(ctx context.Context) (bool, error) {
			held, err := f.gov.QueueHeld(ctx)
			switch {
			case latched.Load():
				afterLatch.Add(1)
			// The first read once the future is due, outside a transaction
			// (the scheduler's, before its claim: the writer is the
			// claim's otherwise), latches right after it read "not held".
			case armed.Load() && time.Now().UnixMilli() > due.Load() && err == nil && !held && f.db.W.Stats().InUse == 0:
				latched.Store(true)
				err = f.gov.Latch(ctx, "operator:alice", "lands after the hold was read")
			}
			return held, err
		}
	})
	// Due a while after it is queued, so no turn of the scheduler that
	// began before the hook was armed can claim it.
	at := time.Now().Add(500 * time.Millisecond)
	due.Store(at.UnixMilli())
	id := primitive.NewID("fut")
	err := f.db.InTx(context.Background(), func(tx *sql.Tx) error {
		return ScheduleTx(context.Background(), tx, Scheduled{ID: id, Route: testRoute, Primitive: "t.probe", Input: json.RawMessage(`{}`),
			Class: "probe", RunAt: at, OnInterrupt: OnInterruptRequeue, Parent: "cmd_probe_parent"})
	})
	if err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	f.d.Wake("probe")
	// Settled: claimed (and refused for the e-stop, without the fix), or
	// the hold read again by the claim after the latch.
	r := f.waitFor(id, "claimed or held", func(r futureRecord) bool { return r.state != "queued" || afterLatch.Load() >= 1 })
	if !latched.Load() || r.state != "queued" || r.attempts != 0 || len(f.runner.started(id)) != 0 {
		t.Fatalf("a due future when the e-stop landed before its claim (latched %v): %+v", latched.Load(), r)
	}
	// Reset and resume: it runs.
	governtest.SetSetting(t, f.db.W, "estop", "{}")
	governtest.SetSetting(t, f.db.W, "queue_held", "false")
	f.d.Resume("probe")
	f.runner.waitStarted(t, id, 1)
	close(f.runner.release)
	f.waitFor(id, "completed", isState("completed"))
}

// TestGivingUpAClaimKeepsANewerOne: a claim whose transaction failed
// leaves its future queued, and another claim (an ending run's hand-off)
// may have registered it again before the first is given up; giving up
// the first must not forget the second, which would leave a running
// attempt that StopRun and the e-stop's hold cannot see.
func TestGivingUpAClaimKeepsANewerOne(t *testing.T) {
	f := newScheduleFixture(t, 2)
	c := f.d.classes["probe"]
	first, second := f.registerClaim("fut_x"), f.registerClaim("fut_x")
	c.unregister(&first)
	c.mu.Lock()
	got := c.running["fut_x"]
	c.mu.Unlock()
	if got != second[0].run {
		t.Fatalf("after the first claim was given up, the class's running entry is %p, want the second claim's %p", got, second[0].run)
	}
	c.unregister(&second)
}
