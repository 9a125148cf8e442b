// Package dispatch runs every primitive call through one path: gate,
// future, inline budget race, outcome, mailbox arrival. A call that
// finishes within the inline budget answers directly and leaves no durable
// trace beyond its side effects; a slower or detached call becomes a
// durable future whose terminal result is queued in its conversation's
// mailbox and piggybacked on that conversation's later responses. Durable
// jobs are futures of this one engine too, admitted as scheduled work of a
// class (schedule.go): a due time, the class's own slots, counted attempts
// and an interruption rule are options of a future, not a second engine.
package dispatch

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// Gate decides, before anything runs, whether a call may proceed. It
// returns a *primitive.Error (normally blocked) to refuse.
type Gate func(ctx context.Context, spec *primitive.Spec, route string) error

// Options are everything a Dispatcher is built from (New).
type Options struct {
	DB        *store.DB
	Registry  *primitive.Registry
	Artifacts *artifacts.Store
	Log       *slog.Logger
	// Gov governs every call: replay, admission, journaling. Required.
	Gov Governor
	// Gates run in order before every call (before the Governor).
	Gates []Gate
	// Budget is the inline budget (dispatch_inline_budget_ms).
	Budget time.Duration
	// MaxResultBytes bounds a stored result; larger ones spill to an
	// artifact. It builds the arrival writer unless Arrivals is set.
	MaxResultBytes int
	// Arrivals is the arrival writer the dispatcher shares with the other
	// parts whose work arrives in mailboxes; nil builds one from
	// Artifacts, MaxResultBytes and Log.
	Arrivals *Arrivals
	// MaxArrivals and MaxArrivalBytes bound one response's arrivals.
	MaxArrivals     int
	MaxArrivalBytes int
	// Classes are the kinds of scheduled futures (schedule.go), each with
	// its own slots and runner.
	Classes []Class
}

// New builds a dispatcher complete: nothing is connected afterwards. A
// dispatcher without a governor would run calls ungoverned, so it is
// refused.
func New(o Options) (*Dispatcher, error) {
	switch {
	case o.Gov == nil:
		return nil, errors.New("build the dispatcher: a governor is required")
	case o.DB == nil || o.Registry == nil:
		return nil, errors.New("build the dispatcher: a database and a registry are required")
	}
	arrivals := o.Arrivals
	if arrivals == nil {
		arrivals = &Arrivals{Artifacts: o.Artifacts, MaxResultBytes: o.MaxResultBytes, Log: o.Log}
	}
	d := &Dispatcher{DB: o.DB, Registry: o.Registry, Artifacts: o.Artifacts, Log: o.Log, Gov: o.Gov,
		Gates: append([]Gate(nil), o.Gates...), Budget: o.Budget, Arrivals: arrivals,
		MaxArrivals: o.MaxArrivals, MaxArrivalBytes: o.MaxArrivalBytes}
	var err error
	if d.classes, err = newClasses(d, o.Classes); err != nil {
		return nil, err
	}
	return d, nil
}

// Dispatcher owns futures and mailboxes. Build it with New; its fields are
// what New set. (The mailbox alone, Deliver, may be read through a literal
// with DB and the arrival bounds; Start refuses a dispatcher without a
// governor.)
type Dispatcher struct {
	DB        *store.DB
	Registry  *primitive.Registry
	Artifacts *artifacts.Store
	Log       *slog.Logger
	// Budget is the inline budget (dispatch_inline_budget_ms).
	Budget time.Duration
	// Arrivals encodes a terminal envelope for its mailbox (spilling a
	// large one to an artifact).
	Arrivals *Arrivals
	// MaxArrivals and MaxArrivalBytes bound one response's arrivals.
	MaxArrivals     int
	MaxArrivalBytes int
	// Gates run in order before every call (before the Governor).
	Gates []Gate
	// Gov governs every call: replay, admission, journaling.
	Gov Governor
	// AfterFinishHook, when set, is called inside the transaction that
	// journals a call's outcome, after Governor.Finish and before the call's
	// future is completed. It is a seam for crash tests (which kill the
	// process there); production leaves it nil.
	AfterFinishHook func(a *Admission)
	// ClaimedHook, when set, is called after a queued future was claimed
	// and admitted, just before its intent is journaled. For a call's
	// queued future (runQueued), and for a scheduled future under a
	// governor that cannot journal inside the claim, that is after the
	// claim committed: the gap in which a crash leaves a running future
	// that never started. Under one that can (govern's) it runs inside the
	// transaction that claims (the scheduler's, or an ending run's
	// hand-off), and a crash there leaves the future queued. A seam for
	// crash and shutdown tests; production leaves it nil.
	ClaimedHook func(a *Admission)
	workState
	mailbox mailboxCache // mailbox.go

	ctx    context.Context // app context: running work outlives requests
	cancel context.CancelFunc
	slots  chan struct{} // generic future concurrency cap
	wg     sync.WaitGroup
	mu     sync.Mutex
	wakers map[string][]chan struct{} // future id → waiters
	// classes are the schedulers of scheduled futures, by class name.
	classes map[string]*classState
}

// Start prepares the dispatcher: it settles futures left by a previous
// process (interrupted running work becomes blocked with outcome unknown,
// never replayed; work that provably never started, and queued work, is
// started) and begins accepting calls.
func (d *Dispatcher) Start(ctx context.Context, maxFutures int) error {
	if d.Gov == nil {
		return errors.New("start the dispatcher: it has no governor (build it with New)")
	}
	d.workMu.Lock()
	d.ctx, d.cancel = context.WithCancel(context.WithoutCancel(ctx))
	d.workMu.Unlock()
	d.slots = make(chan struct{}, maxFutures)
	d.wakers = map[string][]chan struct{}{}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if err := d.recover(ctx); err != nil {
		return err
	}
	if err := d.mailbox.open(ctx, d.DB.Path); err != nil {
		d.Log.Warn("every call reads its mailbox", "err", err)
	}
	d.startClasses()
	return nil
}

// Stop cancels running work and waits for it to settle.
func (d *Dispatcher) Stop() {
	d.cancel()
	d.wg.Wait()
	d.mailbox.close()
}

// Request is one primitive call.
type Request struct {
	Route     string
	Spec      *primitive.Spec
	Input     json.RawMessage
	Detach    bool
	CommandID string
}

// Envelope is what every call answers; ErrorBody its error part.
type (
	Envelope  = callpath.Envelope
	ErrorBody = callpath.ErrorBody
)

// ErrorEnvelope renders err as an envelope.
func ErrorEnvelope(prim string, err error) *Envelope { return callpath.ErrorEnvelope(prim, err) }

func outcome(prim string, res any, err error) *Envelope {
	if err != nil {
		return ErrorEnvelope(prim, err)
	}
	return &Envelope{State: primitive.StateCompleted, Primitive: prim, Result: res}
}

// Call runs one request: gate, then either a detached future, or a race
// of the inline budget after which the still-running call becomes a durable
// future.
func (d *Dispatcher) Call(ctx context.Context, req Request) *Envelope {
	name := req.Spec.Name()
	a := NewAdmission(req, "")
	if env := d.gate(ctx, a, true); env != nil {
		return env
	}
	if req.Spec.Inline {
		if a.SideEffecting() {
			// A client that hangs up must not turn a committed side effect
			// (a submit, an e-stop) into a "cancelled" outcome.
			ctx = context.WithoutCancel(ctx)
		}
		return d.execute(ctx, a, &callLink{})
	}
	if strings.HasPrefix(req.Route, AnonymousPrefix) {
		// Without a conversation nothing can arrive later, so the call is
		// answered when it finishes (bounded by its own timeout).
		if req.Detach {
			return ErrorEnvelope(name, primitive.Failed("invalid_input", "detach: a detached result can only arrive in a conversation; send _meta[\"hearth/conversation\"] (or drop detach)"))
		}
		return d.execute(d.workCtx(), a, &callLink{})
	}
	if req.Detach {
		req.CommandID = a.CommandID
		if _, err := d.insertFuture(ctx, a.FutureID, req, "queued"); err != nil {
			return d.commandTaken(ctx, a, err)
		}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.runQueued(a.FutureID, req, false)
		}()
		return &Envelope{State: primitive.StatePending, Primitive: name, FutureID: a.FutureID, CommandID: a.CommandID}
	}

	work := d.workCtx()
	if req.Spec.Quick != nil && !a.SideEffecting() {
		// A bounded attempt first, on this goroutine: handing a call that
		// takes microseconds to another goroutine costs more than the call
		// (it wakes a second thread). It runs on the work context like the
		// race below; when it declines, the race runs the call as usual.
		if env := d.quick(work, a); env != nil {
			return env
		}
	}

	// Race the inline budget. The primitive runs on the work context so it
	// survives the request when it goes pending; then the runner completes
	// the future in the transaction that journals the outcome.
	done := make(chan *Envelope, 1)
	link := &callLink{}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		done <- d.execute(work, a, link)
	}()
	timer := time.NewTimer(d.Budget)
	defer timer.Stop()
	select {
	case env := <-done:
		return env
	case <-timer.C:
	case <-ctx.Done():
	}
	req.CommandID = a.CommandID
	link.mu.Lock()
	if link.recorded {
		// It finished as the budget ran out: answer inline.
		link.mu.Unlock()
		return <-done
	}
	if err := d.insertRunning(ctx, a, req); err != nil {
		link.mu.Unlock()
		// The work is running but cannot be made durable: wait for it
		// rather than lose its result.
		d.Log.Error("record pending future", "future", a.FutureID, "err", err)
		return <-done
	}
	link.future = true
	link.mu.Unlock()
	return &Envelope{State: primitive.StatePending, Primitive: name, FutureID: a.FutureID, CommandID: a.CommandID}
}

// insertRunning records a call that outlived the inline budget as a running
// future, journaling it as in flight in the same transaction.
func (d *Dispatcher) insertRunning(ctx context.Context, a *Admission, req Request) error {
	ctx = context.WithoutCancel(ctx)
	journal := a.SideEffecting()
	return d.DB.InTx(ctx, func(tx *sql.Tx) error {
		if err := insertRunningTx(ctx, tx, a.FutureID, req); err != nil {
			return err
		}
		if journal {
			return d.Gov.InFlight(ctx, tx, a)
		}
		return nil
	})
}

// Invoke runs a request to completion on the caller's goroutine, through
// the same governance, with no inline budget. Recipe steps and other
// sequential runners use it so that nothing bypasses governance; a call
// that needs a permit is parked as a future (pending, with permit_id).
func (d *Dispatcher) Invoke(ctx context.Context, req Request, futureID string) *Envelope {
	a := NewAdmission(req, futureID)
	if env := d.gate(ctx, a, true); env != nil {
		return env
	}
	return d.execute(ctx, a, &callLink{})
}

// runSafely runs spec, handing it the engine (WithEngine), and turns a
// panic into a failure.
func (d *Dispatcher) runSafely(ctx context.Context, spec *primitive.Spec, call *primitive.Call, input json.RawMessage) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = primitive.Failed("internal", "%s panicked: %v", spec.Name(), p)
		}
	}()
	return spec.Run(withEngine(ctx, d), call, input)
}

// quick makes spec's bounded attempt (Spec.Quick) at an admitted call
// that is never journaled, and returns its envelope, or nil when it
// declined. Its outcome is what execute would answer: a panic is a failure,
// and a call whose work context was cancelled meanwhile (an e-stop) is
// cancelled. Nothing is recorded: a call that is neither journaled nor a
// future has nothing to record (see record).
func (d *Dispatcher) quick(ctx context.Context, a *Admission) (env *Envelope) {
	name := a.Spec.Name()
	call := &primitive.Call{Route: a.Route, FutureID: a.FutureID, CommandID: a.CommandID, Checked: a.Checked()}
	// Counted like every run, so Stop waits for it before the engine's
	// parts close.
	d.wg.Add(1)
	defer d.wg.Done()
	res, done, err := func() (res any, done bool, err error) {
		defer func() {
			if p := recover(); p != nil {
				done, err = true, primitive.Failed("internal", "%s panicked: %v", name, p)
			}
		}()
		return a.Spec.Quick(withEngine(ctx, d), call, a.Input)
	}()
	if !done {
		return nil
	}
	env = outcome(name, res, err)
	stopped(ctx, name, env)
	env.CommandID = a.CommandID
	return env
}

type futureRow struct{ id string }

// errCommandTaken is returned by insertFuture when another future already
// carries the request's command id.
var errCommandTaken = errors.New("another future already carries this command id")

// insertFuture records a future that has not started (queued, or parked
// for a permit). Under governance a future is the first durable record of
// its command id, so the insert is conditional on no other future carrying
// the id, in the same statement (writes are serialized on one connection):
// two calls racing with one command id past Replay create one future, and
// the loser gets errCommandTaken (see commandTaken).
func (d *Dispatcher) insertFuture(ctx context.Context, id string, req Request, state string) (futureRow, error) {
	sum := sha256.Sum256(req.Input)
	guard := req.CommandID != "" && journaled(req.Spec)
	res, err := d.DB.W.ExecContext(context.WithoutCancel(ctx), `INSERT INTO futures(id, route, primitive, input, input_sha256, state, detached, created_at, command_id)
		SELECT ?,?,?,?,?,?,?,?,? WHERE NOT ? OR NOT EXISTS (SELECT 1 FROM futures WHERE command_id = ?)`,
		id, req.Route, req.Spec.Name(), string(req.Input), hex.EncodeToString(sum[:]), state, boolInt(req.Detach), time.Now().UnixMilli(), req.CommandID,
		boolInt(guard), req.CommandID)
	if err != nil {
		return futureRow{}, fmt.Errorf("record future: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return futureRow{}, errCommandTaken
	}
	return futureRow{id: id}, nil
}

// commandTaken answers a call whose future could not be recorded (err from
// insertFuture). When a concurrent call with the same command id recorded
// its future first, the answer is that future, through Replay, exactly as
// if this call had come a moment later.
func (d *Dispatcher) commandTaken(ctx context.Context, a *Admission, err error) *Envelope {
	name := a.Spec.Name()
	if !errors.Is(err, errCommandTaken) {
		return ErrorEnvelope(name, err)
	}
	env, rerr := d.Gov.Replay(ctx, a)
	if rerr != nil {
		return ErrorEnvelope(name, rerr)
	}
	if env == nil {
		return ErrorEnvelope(name, primitive.Conflict("command_id_reused", "command id %s is already in use", a.CommandID))
	}
	return env
}

func insertRunningTx(ctx context.Context, tx *sql.Tx, id string, req Request) error {
	sum := sha256.Sum256(req.Input)
	now := time.Now().UnixMilli()
	_, err := tx.ExecContext(ctx, `INSERT INTO futures(id, route, primitive, input, input_sha256, state, detached, created_at, started_at, command_id)
		VALUES (?,?,?,?,?,'running',?,?,?,?)`, id, req.Route, req.Spec.Name(), string(req.Input), hex.EncodeToString(sum[:]), boolInt(req.Detach), now, now, req.CommandID)
	if err != nil {
		return fmt.Errorf("record future: %w", err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runQueued waits for a generic-future slot, claims the future (a queued
// future cancelled meanwhile is not run), admits it again (an e-stop may
// have latched since it was queued), runs it and completes it. approved is
// set when the operator approved a permit for exactly this input.
func (d *Dispatcher) runQueued(id string, req Request, approved bool) {
	// Operator-approved work does not wait for a generic slot: the caller
	// that parked it (a recipe step, a scatter item) may itself hold one,
	// and approvals are bounded by the operator's own clicks.
	if !approved {
		select {
		case d.slots <- struct{}{}:
		case <-d.ctx.Done():
			return // stays queued; the next start runs it
		}
		defer func() { <-d.slots }()
	}
	res, err := d.DB.W.ExecContext(d.ctx, `UPDATE futures SET state = 'running', started_at = ? WHERE id = ? AND state = 'queued'`, time.Now().UnixMilli(), id)
	if err != nil {
		d.Log.Error("claim future", "future", id, "err", err)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return // cancelled before it started
	}
	a := NewAdmission(req, id)
	a.Approved = approved
	// The input may differ from the one admitted at submission (references
	// resolved), and so may the world (Hearth's own pid after a restart).
	if err := precheck(a); err != nil {
		env := ErrorEnvelope(req.Spec.Name(), err)
		env.CommandID = a.CommandID
		d.complete(id, req.Route, env)
		return
	}
	if err := d.Gov.Admit(d.ctx, a); errors.Is(err, ErrPermitRequired) {
		d.reparkForPermit(a)
		return
	} else if err != nil {
		env := ErrorEnvelope(req.Spec.Name(), err)
		env.CommandID = a.CommandID
		if approved && a.SideEffecting() {
			// The ledger says the operator approved it: its outcome (an
			// e-stop latched since, say) is journaled too, so that the
			// ledger's last word on the call is what happened.
			d.record(a, env, true, &callLink{future: true})
			return
		}
		d.complete(id, req.Route, env)
		return
	}
	if d.ClaimedHook != nil {
		d.ClaimedHook(a)
	}
	// execute completes the future in the transaction that journals the
	// outcome (and, when shutting down, leaves it for the next start).
	d.execute(d.workCtx(), a, &callLink{future: true})
}

// reparkForPermit turns a claimed future back into one awaiting a permit
// (the policy changed while it was queued).
// The permit request and the state change are one commit.
func (d *Dispatcher) reparkForPermit(a *Admission) {
	_, err := d.Gov.RequestPermit(d.ctx, a, func(ctx context.Context, tx *sql.Tx, _ string) error {
		return parkTx(ctx, tx, a.FutureID, "")
	})
	if errors.Is(err, errNotRunning) {
		return // stopped or settled meanwhile; nothing was asked
	}
	if err != nil {
		d.complete(a.FutureID, a.Route, ErrorEnvelope(a.Spec.Name(), err))
	}
}

// errNotRunning says a future to park was no longer running.
var errNotRunning = errors.New("the future is no longer running")

// parkTx moves running future id to 'permit' inside tx (with extra SET
// clauses when given), or fails with errNotRunning.
func parkTx(ctx context.Context, tx *sql.Tx, id, extra string) error {
	res, err := tx.ExecContext(ctx, `UPDATE futures SET state = 'permit'`+extra+` WHERE id = ? AND state = 'running'`, id)
	if err != nil {
		return fmt.Errorf("park future %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNotRunning
	}
	return nil
}

// ReleaseApproved releases a future parked for a permit the operator
// approved (the approval already committed) and runs it once: the stored
// (journaled) input, for the stored conversation and primitive. It fails
// when the future is no longer parked (cancelled meanwhile). The operator's
// approval reaches it through internal/control, as does, at start-up, an
// approval a previous process committed but did not release; never a tool.
func (d *Dispatcher) ReleaseApproved(ctx context.Context, futureID string) error {
	var route, prim, input string
	var cmd sql.NullString
	err := d.DB.R.QueryRowContext(ctx, `SELECT route, primitive, input, command_id FROM futures WHERE id = ? AND state = 'permit'`, futureID).Scan(&route, &prim, &input, &cmd)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("future %s is not waiting for a permit (cancelled or settled)", futureID)
	}
	if err != nil {
		return fmt.Errorf("read approved future %s: %w", futureID, err)
	}
	c, _, err := d.classOf(ctx, futureID)
	if err != nil {
		return err
	}
	spec, ok := d.Registry.Lookup(prim)
	if !ok && c == nil {
		d.complete(futureID, route, ErrorEnvelope(prim, primitive.Blocked("unknown_primitive", "primitive %s no longer exists", prim)))
		return fmt.Errorf("future %s: primitive %s no longer exists", futureID, prim)
	}
	errGone := fmt.Errorf("future %s is not waiting for a permit (cancelled or settled)", futureID)
	wctx := context.WithoutCancel(ctx) // an approval is carried out whole, whatever its request does
	err = d.DB.InTx(wctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(wctx, `UPDATE futures SET state = 'queued' WHERE id = ? AND state = 'permit'`, futureID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errGone
		}
		if c != nil {
			return c.Runner.Released(wctx, tx, futureID)
		}
		return nil
	})
	if errors.Is(err, errGone) {
		return err
	}
	if err != nil {
		return fmt.Errorf("release approved future %s: %w", futureID, err)
	}
	if c != nil {
		// A scheduled future is claimed by its class's scheduler as a new
		// attempt, which the operator's approval of its input covers.
		c.wake()
		return nil
	}
	req := Request{Route: route, Spec: spec, Input: json.RawMessage(input), Detach: true, CommandID: cmd.String}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.runQueued(futureID, req, true)
	}()
	return nil
}

// Settle completes a non-terminal future with env (a denied or expired
// permit). internal/control calls it to carry out such a decision.
func (d *Dispatcher) Settle(futureID string, env *Envelope) {
	c, route, err := d.classOf(context.Background(), futureID)
	if err != nil {
		d.Log.Error("settle future", "future", futureID, "err", err)
		return
	}
	if c != nil {
		c.settle(futureID, route, env)
		return
	}
	d.complete(futureID, route, env)
}

// complete records a future's terminal envelope and queues its arrival in
// one transaction, spilling a large result to an artifact first.
func (d *Dispatcher) complete(id, route string, env *Envelope) {
	ctx := context.WithoutCancel(d.ctx)
	payload := d.Arrivals.Payload(ctx, route, id, env)
	now := time.Now()
	err := d.DB.InTx(ctx, func(tx *sql.Tx) error {
		return completeTx(ctx, tx, id, route, env.State, payload, now)
	})
	if err != nil {
		d.Log.Error("complete future", "future", id, "err", err)
	}
	d.wake(id)
	d.releaseDependents(id)
}

func futureState(envState string) string {
	if envState == primitive.StateFailed {
		return "failed"
	}
	return envState
}

// neverStarted reports whether a future the previous process left running
// provably never started its primitive: it is side-effecting, so under
// governance it runs only after Begin journaled its intent, and its command
// has no journaled intent naming it. Such a future was claimed (or outlived
// the inline budget) and the process died before Begin committed. For a
// read primitive (never journaled), or a future without a command id,
// nothing proves it, and the future is interrupted work: unknown.
func (d *Dispatcher) neverStarted(ctx context.Context, prim, cmd, id string) (bool, error) {
	if cmd == "" {
		return false, nil
	}
	spec, ok := d.Registry.Lookup(prim)
	if !ok || !journaled(spec) {
		return false, nil
	}
	began, err := d.Gov.Journaled(ctx, cmd, id)
	return !began, err
}

// recover settles futures a previous process left behind. A running
// future whose primitive provably never started is queued again (it runs
// now, like every queued future, admitted afresh); every other running
// future was interrupted: a scheduled one follows its interruption rule
// (recoverClass), a call's future becomes blocked with outcome unknown.
// Queued scheduled futures need nothing: their scheduler finds them.
func (d *Dispatcher) recover(ctx context.Context) error {
	if err := d.reofferAfterRestart(ctx); err != nil {
		return err
	}
	for _, c := range d.classes {
		if err := d.recoverClass(ctx, c); err != nil {
			return err
		}
	}
	rows, err := d.DB.R.QueryContext(ctx, `SELECT id, route, primitive, COALESCE(command_id, '') FROM futures WHERE state = 'running' AND class IS NULL`)
	if err != nil {
		return fmt.Errorf("find interrupted futures: %w", err)
	}
	type fut struct{ id, route, prim, cmd string }
	var running []fut
	for rows.Next() {
		var f fut
		if err := rows.Scan(&f.id, &f.route, &f.prim, &f.cmd); err != nil {
			rows.Close()
			return err
		}
		running = append(running, f)
	}
	rows.Close()
	var interrupted []fut
	for _, f := range running {
		never, err := d.neverStarted(ctx, f.prim, f.cmd, f.id)
		if err != nil {
			return fmt.Errorf("recover future %s: %w", f.id, err)
		}
		if !never {
			interrupted = append(interrupted, f)
			continue
		}
		if _, err := d.DB.W.ExecContext(ctx, `UPDATE futures SET state = 'queued', started_at = NULL WHERE id = ? AND state = 'running'`, f.id); err != nil {
			return fmt.Errorf("requeue future %s: %w", f.id, err)
		}
		d.Log.Info("requeued a future that never started", "future", f.id, "command", f.cmd)
	}
	for _, f := range interrupted {
		env := &Envelope{State: primitive.StateBlocked, Primitive: f.prim, Error: &ErrorBody{Code: "unknown",
			Message: "Hearth stopped while this call was running; it was not replayed. Re-read the state it may have changed before retrying."}}
		d.complete(f.id, f.route, env)
		if _, err := d.DB.W.ExecContext(ctx, `UPDATE futures SET outcome = 'unknown' WHERE id = ?`, f.id); err != nil {
			return err
		}
	}
	rows, err = d.DB.R.QueryContext(ctx, `SELECT id, route, primitive, input, COALESCE(command_id, '') FROM futures WHERE state = 'queued' AND class IS NULL ORDER BY created_at`)
	if err != nil {
		return fmt.Errorf("find queued futures: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, route, prim, input, cmd string
		if err := rows.Scan(&id, &route, &prim, &input, &cmd); err != nil {
			return err
		}
		spec, ok := d.Registry.Lookup(prim)
		if !ok {
			d.complete(id, route, ErrorEnvelope(prim, primitive.Blocked("unknown_primitive", "primitive %s no longer exists", prim)))
			continue
		}
		req := Request{Route: route, Spec: spec, Input: json.RawMessage(input), Detach: true, CommandID: cmd}
		approved := d.Gov.ApprovedFuture(ctx, id)
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.runQueued(id, req, approved)
		}()
	}
	d.recoverWaiting()
	return rows.Err()
}

// Future is a future's durable record as the task tool reports it.
type Future struct {
	ID         string          `json:"id"`
	Primitive  string          `json:"primitive"`
	State      string          `json:"state"`
	Detached   bool            `json:"detached"`
	Outcome    string          `json:"outcome,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
	route      string
	class      string // of a scheduled future
}

// ErrNoFuture is returned for an unknown future or one of another
// conversation (the two are indistinguishable on purpose).
var ErrNoFuture = errors.New("no such future in this conversation")

// GetFuture returns a future of route.
func (d *Dispatcher) GetFuture(ctx context.Context, route, id string) (Future, error) {
	var f Future
	var det int
	var outcome, result sql.NullString
	var created int64
	var finished sql.NullInt64
	var class sql.NullString
	err := d.DB.R.QueryRowContext(ctx, `SELECT id, route, primitive, state, detached, outcome, result, created_at, finished_at, class FROM futures WHERE id = ?`, id).
		Scan(&f.ID, &f.route, &f.Primitive, &f.State, &det, &outcome, &result, &created, &finished, &class)
	f.class = class.String
	if errors.Is(err, sql.ErrNoRows) || (err == nil && f.route != route) {
		return Future{}, fmt.Errorf("%w: %s", ErrNoFuture, id)
	}
	if err != nil {
		return Future{}, err
	}
	f.Detached = det != 0
	f.Outcome = outcome.String
	if result.Valid {
		f.Result = json.RawMessage(result.String)
	}
	f.CreatedAt = time.UnixMilli(created).UTC()
	if finished.Valid {
		t := time.UnixMilli(finished.Int64).UTC()
		f.FinishedAt = &t
	}
	return f, nil
}

// Terminal reports whether a future state is final.
func Terminal(state string) bool { return Settled(state) }

// Watch returns a channel closed when future id next completes.
func (d *Dispatcher) Watch(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	d.mu.Lock()
	d.wakers[id] = append(d.wakers[id], ch)
	d.mu.Unlock()
	return ch, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		ws := d.wakers[id]
		for i, w := range ws {
			if w == ch {
				d.wakers[id] = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(d.wakers[id]) == 0 {
			delete(d.wakers, id)
		}
	}
}

func (d *Dispatcher) wake(id string) {
	d.mu.Lock()
	ws := d.wakers[id]
	delete(d.wakers, id)
	d.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
}
