package dispatch

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// Scheduled futures. A future may be admitted as scheduled work of a
// class (the durable jobs of the task tool are class "job"): it is queued
// until its due time (run_at), runs within its class's own slots (so
// queued work never takes the slots of interactive calls or of other
// futures), counts its attempts, and follows an interruption rule when
// Hearth stops while it runs — requeue, or block with outcome unknown.
// Everything else is the one engine's: its dependencies are future_deps
// (released by the same hooks), each attempt is admitted by the same gate
// when it starts (e-stop, policy, allow-rules, permits, the UNKNOWN gate)
// and parked for a permit as any future is, journaled under its own command
// id, settled by the same recovery, and its arrival written by the one
// writer. Each class has a scheduler that sleeps until the next due time or
// a wake-up (a submit, an end, a release): no polling, so an idle class
// costs nothing however many delayed futures it holds.

// Interruption rules of a scheduled future (futures.on_interrupt).
const (
	OnInterruptRequeue = "requeue"
	OnInterruptBlock   = "block"
)

// Class is a kind of scheduled future and the part that owns it.
type Class struct {
	// Name is stored in futures.class.
	Name string
	// Slots bounds how many of the class's futures run at once.
	Slots int
	// Held, when set, reports whether the operator holds the class (the
	// e-stop holds it until the operator resumes it). It is read before
	// anything starts, so a hold survives a restart, and again inside the
	// transaction that claims: it must read through the reader pool, never
	// the writer that transaction holds.
	Held func(ctx context.Context) (bool, error)
	// Runner runs the class's futures and keeps their view.
	Runner ClassRunner
}

// ClassRunner is what the engine needs from the part that owns a class.
type ClassRunner interface {
	// Run executes one admitted, journaled attempt of call.FutureID. ctx
	// is cancelled when the attempt is stopped (Stop, Hold) or Hearth
	// shuts down. An error may come with a result (a non-zero exit).
	Run(ctx context.Context, call *primitive.Call) (any, error)
	// Ended is told, before the transaction that makes future id
	// terminal, how it ended (env's state and error; res when it ran). It
	// sets env.Result to the view the arrival carries and returns what to
	// write beside the completion, inside that transaction.
	Ended(ctx context.Context, id string, env *Envelope, res any) (func(ctx context.Context, tx *sql.Tx) error, error)
	// Parked records, inside tx, that id waits for the operator's permit
	// permitID (and queues the arrival that says so).
	Parked(ctx context.Context, tx *sql.Tx, id, permitID string) error
	// Released records, inside tx, that the operator approved the permit
	// id waited for and it is queued again (its next attempt runs under
	// that approval).
	Released(ctx context.Context, tx *sql.Tx, id string) error
	// Held records, inside tx, that id came due while its conversation
	// had the open UNKNOWN of command unknown and waits, held, until it is
	// reconciled (held.go).
	Held(ctx context.Context, tx *sql.Tx, id, unknown string) error
	// Requeued records, inside tx, that id was requeued because Hearth
	// stopped while attempt ran.
	Requeued(ctx context.Context, tx *sql.Tx, id string, attempt int) error
	// DependencyBlocked is the refusal of a future whose dependency dep
	// ended depState.
	DependencyBlocked(ctx context.Context, dep, depState string) *primitive.Error
}

// Scheduled is one scheduled future as its owner admits it (ScheduleTx).
type Scheduled struct {
	ID, Route string
	// Primitive names the registered primitive each attempt is admitted
	// as; Input is what governance sees (and a permit shows).
	Primitive   string
	Input       json.RawMessage
	Class       string
	RunAt       time.Time
	OnInterrupt string
	// Parent is the command that queued it (see callpath.Admission).
	Parent string
	// Deps are futures of Route it runs after; Waiting says some have not
	// settled yet.
	Deps    []string
	Waiting bool
	// Settled, when set, is its terminal envelope at once (blocked by a
	// dependency at submission); its arrival is the caller's to queue.
	Settled *Envelope
}

// RunCommandID is the command id of attempt n of scheduled future id:
// derived from the future, so its runs are one family in the ledger.
func RunCommandID(id string, n int) string { return fmt.Sprintf("%s/run%d", id, n) }

// ScheduleTx records s inside tx (the owner's transaction, which also
// writes the owner's view). Call Wake after the commit.
func ScheduleTx(ctx context.Context, tx *sql.Tx, s Scheduled) error {
	state, now := "queued", time.Now().UnixMilli()
	var result, finished any
	switch {
	case s.Settled != nil:
		state, finished = futureState(s.Settled.State), now
		b, err := json.Marshal(s.Settled)
		if err != nil {
			return fmt.Errorf("encode future %s: %w", s.ID, err)
		}
		result = string(b)
	case s.Waiting:
		state = StateWaiting
	}
	var parent any
	if s.Parent != "" {
		parent = s.Parent
	}
	sum := sha256.Sum256(s.Input)
	if _, err := tx.ExecContext(ctx, `INSERT INTO futures(id, route, primitive, input, input_sha256, state, detached, created_at, finished_at, result,
			class, run_at, on_interrupt, parent) VALUES (?,?,?,?,?,?,1,?,?,?,?,?,?,?)`,
		s.ID, s.Route, s.Primitive, string(s.Input), hex.EncodeToString(sum[:]), state, now, finished, result, s.Class, s.RunAt.UnixMilli(), s.OnInterrupt, parent); err != nil {
		return fmt.Errorf("record future %s: %w", s.ID, err)
	}
	for _, dep := range s.Deps {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO future_deps(future_id, dep_id) VALUES (?,?)`, s.ID, dep); err != nil {
			return fmt.Errorf("record dependency of %s: %w", s.ID, err)
		}
	}
	return nil
}

// classState is a class's scheduler.
type classState struct {
	Class
	d       *Dispatcher
	wakeCh  chan struct{}
	mu      sync.Mutex
	running map[string]*classRun
	held    bool
}

type classRun struct {
	cancel context.CancelFunc
	// why, when set, says who stopped the run on purpose (task.cancel,
	// the e-stop); a run stopped without it was stopped by a shutdown.
	why  atomic.Pointer[string]
	done chan struct{}
}

func (r *classRun) stop(why string) {
	r.why.CompareAndSwap(nil, &why)
	r.cancel()
}

// newClasses builds the schedulers of cs. A class needs a name, unique
// among them, and a runner.
func newClasses(d *Dispatcher, cs []Class) (map[string]*classState, error) {
	out := map[string]*classState{}
	for i, c := range cs {
		switch {
		case c.Name == "":
			return nil, fmt.Errorf("build the dispatcher: class %d has no Name", i)
		case c.Runner == nil:
			return nil, fmt.Errorf("build the dispatcher: class %q has no Runner", c.Name)
		case out[c.Name] != nil:
			return nil, fmt.Errorf("build the dispatcher: class %q is given twice", c.Name)
		}
		if c.Slots < 1 {
			c.Slots = 1
		}
		out[c.Name] = &classState{Class: c, d: d, wakeCh: make(chan struct{}, 1), running: map[string]*classRun{}}
	}
	return out, nil
}

// Wake nudges the scheduler of class (a submit, a release); it never
// blocks.
func (d *Dispatcher) Wake(class string) {
	if c := d.classes[class]; c != nil {
		c.wake()
	}
}

func (c *classState) wake() {
	select {
	case c.wakeCh <- struct{}{}:
	default:
	}
}

// Hold stops class from starting anything and stops every running future
// of it, which ends cancelled with reason why. Only Resume releases it.
func (d *Dispatcher) Hold(class, why string) {
	c := d.classes[class]
	if c == nil {
		return
	}
	c.mu.Lock()
	c.held = true
	running := make([]*classRun, 0, len(c.running))
	for _, r := range c.running {
		running = append(running, r)
	}
	c.mu.Unlock()
	for _, r := range running {
		r.stop(why)
	}
}

// Resume releases a Hold and lets due futures of class start.
func (d *Dispatcher) Resume(class string) {
	if c := d.classes[class]; c != nil {
		c.mu.Lock()
		c.held = false
		c.mu.Unlock()
		c.wake()
	}
}

// StopRun stops the running scheduled future id of class with reason why
// and waits, within ctx, until its end is recorded, or until the claim it
// found is given up (its transaction did not commit: the future is queued
// again, and the caller may cancel it as queued). It reports whether the
// future was running here.
func (d *Dispatcher) StopRun(ctx context.Context, class, id, why string) bool {
	c := d.classes[class]
	if c == nil {
		return false
	}
	c.mu.Lock()
	r := c.running[id]
	c.mu.Unlock()
	if r == nil {
		return false
	}
	r.stop(why)
	select {
	case <-r.done:
	case <-ctx.Done():
	}
	return true
}

// startClasses starts every class's scheduler (after recovery).
func (d *Dispatcher) startClasses() {
	for _, c := range d.classes {
		d.wg.Add(1)
		go c.loop()
	}
}

// loop is a class's scheduler. Each turn starts what is due within the
// class's slots, then sleeps until the next due time, a wake-up or
// shutdown. Futures waiting on dependencies need no timer: their release
// wakes the loop.
func (c *classState) loop() {
	defer c.d.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		next, err := c.schedule()
		if err != nil {
			if c.d.ctx.Err() != nil {
				return
			}
			c.d.Log.Error("schedule futures", "class", c.Name, "err", err)
			next = time.Now().Add(time.Second) // retry; the database may be busy
		}
		if next.IsZero() {
			timer.Stop()
		} else {
			timer.Reset(max(time.Until(next), 0))
		}
		select {
		case <-c.d.ctx.Done():
			timer.Stop()
			return
		case <-c.wakeCh:
		case <-timer.C:
		}
	}
}

// schedule starts due futures in free slots and returns when the next
// not-yet-due one is due (zero when there is none).
func (c *classState) schedule() (time.Time, error) {
	ctx := c.d.ctx
	c.mu.Lock()
	free, held := c.Slots-len(c.running), c.held
	c.mu.Unlock()
	if free <= 0 {
		// Nothing can start, and nothing needs a timer: every run that
		// leaves its slot wakes the loop again.
		return time.Time{}, nil
	}
	if !held && c.Held != nil {
		var err error
		if held, err = c.Held(ctx); err != nil {
			return time.Time{}, fmt.Errorf("read the hold of %s: %w", c.Name, err)
		}
	}
	if held {
		return time.Time{}, nil // Resume wakes the loop
	}
	now := time.Now().UnixMilli()
	started, err := c.claim(now, free)
	if err != nil {
		return time.Time{}, err
	}
	for _, s := range started {
		c.d.wg.Add(1)
		go c.run(s)
	}
	var next sql.NullInt64
	stmt, err := c.d.DB.ReadStmt(ctx, nextDueQuery)
	if err != nil {
		return time.Time{}, err
	}
	if err := stmt.QueryRowContext(ctx, c.Name, now).Scan(&next); err != nil {
		return time.Time{}, fmt.Errorf("find the next due future: %w", err)
	}
	if !next.Valid {
		return time.Time{}, nil
	}
	// One millisecond late rather than early: run_at has millisecond
	// resolution and the wall clock, not the monotonic one, decides.
	return time.UnixMilli(next.Int64 + 1), nil
}

// dueQuery and nextDueQuery read a class's queued futures through
// futures_due, which holds only those.
const (
	dueQuery = `SELECT id, route, primitive, input, attempts, COALESCE(parent, '') FROM futures
		WHERE state = 'queued' AND class = ? AND run_at <= ? ORDER BY run_at, rowid LIMIT ?`
	nextDueQuery = `SELECT MIN(run_at) FROM futures WHERE state = 'queued' AND class = ? AND run_at > ?`
)

// claimed is a future claimed for one attempt.
type claimed struct {
	a   *Admission
	run *classRun
	ctx context.Context
	// gone is set when its primitive is no longer registered.
	gone bool
	// With a governor that journals inside the claim (txBeginner), the
	// claim also admitted the attempt: begun says its intent committed
	// with the claim; otherwise permit says it is to be parked for the
	// operator's permit, and refused why it does not run.
	begun, permit bool
	refused       error
}

// txBeginner is a Governor that journals an intent inside a transaction
// of the caller's (govern.Governor.BeginTx): the claim then admits each
// attempt and journals the admitted ones in the commit that claims them,
// one commit for both instead of one each.
type txBeginner interface {
	BeginTx(ctx context.Context, tx *sql.Tx, a *Admission) error
}

var errHeld = errors.New("class held")

// claim marks up to n due futures running (attempts+1, the attempt's
// command id) in one transaction. Each is registered as running before
// the commit, so a stop that sees the committed state always finds it.
// With a txBeginner governor each attempt is also admitted by the gate
// (admit) and, when admitted, its intent journaled in that same commit;
// run carries out the rest. After the commit their waiters wake: queued
// → running is a change.
func (c *classState) claim(now int64, n int) ([]claimed, error) {
	d := c.d
	var out []claimed
	err := d.DB.InTx(d.ctx, func(tx *sql.Tx) error {
		c.unregister(&out)
		if c.Held != nil {
			// Read again now that this transaction holds the writer: an
			// e-stop that committed after schedule read the hold holds
			// the class, and its due futures stay queued for the resume
			// instead of being claimed and refused.
			if held, err := c.Held(d.ctx); err != nil {
				return fmt.Errorf("read the hold of %s: %w", c.Name, err)
			} else if held {
				return errHeld
			}
		}
		return c.claimTx(d.ctx, tx, now, n, &out)
	})
	if errors.Is(err, errHeld) {
		return nil, nil
	}
	if err != nil {
		c.unregister(&out)
		return nil, err
	}
	for _, s := range out {
		d.wake(s.a.FutureID)
	}
	return out, nil
}

// unregister forgets the claims of *out (their transaction did not
// commit): none of them will run, so a StopRun that found one is told it
// ended.
func (c *classState) unregister(out *[]claimed) {
	c.mu.Lock()
	for _, s := range *out {
		// Only its own entry: the future is still queued, and a hand-off
		// may have claimed it again meanwhile.
		if c.running[s.a.FutureID] == s.run {
			delete(c.running, s.a.FutureID)
		}
		s.run.cancel()
		close(s.run.done)
	}
	c.mu.Unlock()
	*out = nil
}

// claimTx is claim's work inside tx, its statements under ctx: it claims
// up to n futures due by now, registers them into *out (errHeld when the
// class is held) and, with a txBeginner governor, admits each and
// journals the admitted ones. On an error the caller unregisters *out.
func (c *classState) claimTx(ctx context.Context, tx *sql.Tx, now int64, n int, out *[]claimed) error {
	d := c.d
	type due struct {
		id, route, prim, input, parent string
		attempts                       int
	}
	rows, err := d.DB.TxQuery(ctx, tx, dueQuery, c.Name, now, n)
	ds, err := store.Collect(rows, err, func(r *sql.Rows) (x due, err error) {
		return x, r.Scan(&x.id, &x.route, &x.prim, &x.input, &x.attempts, &x.parent)
	})
	if err != nil {
		return fmt.Errorf("find due futures: %w", err)
	}
	if len(ds) == 0 {
		return nil
	}
	started := time.Now().UnixMilli()
	var as []claimed
	for _, x := range ds {
		cmd := RunCommandID(x.id, x.attempts+1)
		if _, err := d.DB.TxExec(ctx, tx, `UPDATE futures SET state = 'running', attempts = attempts + 1, started_at = ?, command_id = ? WHERE id = ? AND state = 'queued'`,
			started, cmd, x.id); err != nil {
			return fmt.Errorf("claim future %s: %w", x.id, err)
		}
		spec, ok := d.Registry.Lookup(x.prim)
		if !ok {
			spec = &primitive.Spec{Tool: x.prim, Risk: primitive.RiskKill}
		}
		a := NewAdmission(Request{Route: x.route, Spec: spec, Input: json.RawMessage(x.input), CommandID: cmd}, x.id)
		a.Scheduled, a.Parent = true, x.parent
		as = append(as, claimed{a: a, gone: !ok})
	}
	first := len(*out)
	if err := c.register(as, out); err != nil {
		return err
	}
	tb, fold := d.Gov.(txBeginner)
	if !fold {
		return nil
	}
	for i := first; i < len(*out); i++ {
		if err := c.admit(ctx, tx, tb, &(*out)[i]); err != nil {
			return err
		}
	}
	return nil
}

// register records as as running (unless the class is held), each with
// its own context, into *out.
func (c *classState) register(as []claimed, out *[]claimed) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held {
		return errHeld
	}
	for _, s := range as {
		ctx, cancel := context.WithCancel(c.d.ctx)
		s.run, s.ctx = &classRun{cancel: cancel, done: make(chan struct{})}, ctx
		c.running[s.a.FutureID] = s.run
		*out = append(*out, s)
	}
	return nil
}

// admit runs, inside the claim's transaction tx, the gate an attempt gets
// when it starts (the one a fresh call gets, without command-id replay
// and the observing gates; see run) and journals the intent of an
// admitted one in tx. The gate reads committed state, as it does for a
// fresh call; the e-stop is read again inside tx by BeginTx. A refusal or
// a permit to ask for is left in s for run; only a failure of the
// database fails the claim (nothing of it commits, and the class retries).
// The journal's writes use the claim's context, not the attempt's: a stop
// of the attempt (task.cancel) while it is being claimed must not fail
// the other claims; run sees the stop before it starts anything.
func (c *classState) admit(ctx context.Context, tx *sql.Tx, tb txBeginner, s *claimed) error {
	d, a := c.d, s.a
	if s.gone {
		return nil
	}
	if err := precheck(a); err != nil {
		s.refused = err
		return nil
	}
	switch err := d.Gov.Admit(s.ctx, a); {
	case errors.Is(err, ErrPermitRequired):
		s.permit = true
		return nil
	case err != nil:
		s.refused = err
		return nil
	}
	if d.ClaimedHook != nil {
		d.ClaimedHook(a)
	}
	err := tb.BeginTx(ctx, tx, a)
	var pe *primitive.Error
	switch {
	case errors.As(err, &pe):
		s.refused = pe
		return nil
	case err != nil:
		return fmt.Errorf("journal the intent of %s: %w", a.CommandID, err)
	}
	s.begun = true
	return nil
}

// run carries out one claimed attempt: admitted as a fresh call would be
// admitted now (by the claim, see admit, or here when the governor cannot
// journal inside the claim), it is parked for a permit or refused as the
// gate decided, or journaled and run; then its end is recorded. When Hearth is shutting down and the run
// was stopped for that reason, nothing is recorded: the future stays
// running and the next start applies its interruption rule. The gate is
// gate's without two steps that belong to a client's call: command-id
// replay (an attempt's command id is the engine's, never a client's) and
// the observing gates (an attempt is no call of the conversation's).
func (c *classState) run(s claimed) {
	d, a := c.d, s.a
	defer d.wg.Done()
	defer func() {
		c.mu.Lock()
		if c.running[a.FutureID] == s.run {
			delete(c.running, a.FutureID) // a requeued future may be claimed again already
		}
		c.mu.Unlock()
		s.run.cancel()
		close(s.run.done)
		c.wake()
	}()
	name := a.Spec.Name()
	stopped := func(why string) *Envelope {
		return &Envelope{State: primitive.StateCancelled, Primitive: name, Error: &ErrorBody{Code: "cancelled", Message: why}}
	}
	// refuse ends an attempt that did not run: refused by the gate, or
	// stopped on purpose while it was being admitted. One stopped by a
	// shutdown stays running: nothing is journaled, so the next start
	// queues it again, not counted.
	refuse := func(err error) {
		env := ErrorEnvelope(name, err)
		switch why := s.run.why.Load(); {
		case why != nil:
			env = stopped(*why)
		case d.ctx.Err() != nil:
			return
		case heldFor(err) != "" && c.hold(a, heldFor(err)):
			return // held until the UNKNOWN is reconciled (held.go)
		}
		env.CommandID = a.CommandID
		c.finish(a, env, nil, false)
	}
	switch {
	case s.gone:
		refuse(primitive.Blocked("unknown_primitive", "primitive %s no longer exists", a.Spec.Tool))
		return
	case s.refused != nil:
		refuse(s.refused)
		return
	case s.permit:
		c.park(a)
		return
	case !s.begun:
		// A governor that cannot journal inside the claim: the gate and
		// the intent come now, the intent in its own commit.
		if err := precheck(a); err != nil {
			refuse(err)
			return
		}
		err := d.Gov.Admit(s.ctx, a)
		if errors.Is(err, ErrPermitRequired) {
			c.park(a)
			return
		}
		if err != nil {
			refuse(err)
			return
		}
		if d.ClaimedHook != nil {
			d.ClaimedHook(a)
		}
		if err := d.Gov.Begin(s.ctx, a); err != nil {
			refuse(err)
			return
		}
	}
	if d.ctx.Err() != nil && s.run.why.Load() == nil {
		c.unstarted(a)
		return
	}
	call := &primitive.Call{Route: a.Route, FutureID: a.FutureID, CommandID: a.CommandID, Checked: a.Checked()}
	res, err := c.runSafely(s.ctx, call)
	why := s.run.why.Load()
	env := outcome(name, res, err)
	switch {
	case why != nil:
		env = stopped(*why)
	case d.ctx.Err() != nil && env.State != primitive.StateCompleted:
		return // shutting down: the next start applies the interruption rule
	}
	env.CommandID = a.CommandID
	c.finish(a, env, res, true)
}

// unstarted settles an attempt whose intent was journaled (by its claim)
// but which Hearth began shutting down before starting: its command's
// outcome says it never started, and the future is queued again, so the
// next start runs it as a new attempt rather than applying its
// interruption rule to something that never ran (an UNKNOWN under
// on_interrupt "block"). If this cannot be recorded, the future stays
// running and the next start's recovery decides, as before.
func (c *classState) unstarted(a *Admission) {
	d := c.d
	ctx := context.WithoutCancel(d.ctx)
	env := &Envelope{State: primitive.StateCancelled, Primitive: a.Spec.Name(), CommandID: a.CommandID, Error: &ErrorBody{Code: "cancelled",
		Message: "Hearth stopped before this attempt started; it runs again as a new attempt when Hearth starts"}}
	err := d.DB.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE futures SET state = 'queued', started_at = NULL WHERE id = ? AND state = 'running'`, a.FutureID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errNotRunning
		}
		return d.Gov.Finish(ctx, tx, a, env)
	})
	if err != nil && !errors.Is(err, errNotRunning) {
		d.Log.Error("requeue an attempt that never started", "future", a.FutureID, "err", err)
	}
}

func (c *classState) runSafely(ctx context.Context, call *primitive.Call) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, primitive.Failed("internal", "%s runner panicked: %v", c.Name, p)
		}
	}()
	return c.Runner.Run(ctx, call)
}

// park turns a claimed attempt into a future awaiting the operator's
// permit: its attempt is not counted, and the runner records why. The
// permit request, the state change and the runner's record are one commit,
// so a crash or a cancel never finds one without the others.
func (c *classState) park(a *Admission) {
	d := c.d
	ctx := context.WithoutCancel(d.ctx)
	_, err := d.Gov.RequestPermit(ctx, a, func(ctx context.Context, tx *sql.Tx, pid string) error {
		if err := parkTx(ctx, tx, a.FutureID, ", attempts = attempts - 1, started_at = NULL"); err != nil {
			return err
		}
		return c.Runner.Parked(ctx, tx, a.FutureID, pid)
	})
	switch {
	case errors.Is(err, errNotRunning):
		// Settled elsewhere meanwhile: nothing was asked, nothing to record.
	case err != nil:
		env := ErrorEnvelope(a.Spec.Name(), primitive.Failed("journal_failed", "could not ask the operator for a permit, so %s did not start: %v", a.FutureID, err))
		c.settle(a.FutureID, a.Route, env)
	}
	d.wake(a.FutureID)
}

// finish records an attempt's end: the journal's outcome (when it began),
// the runner's view, the future's completion and its arrival in one
// transaction; then its dependents are released or blocked.
func (c *classState) finish(a *Admission, env *Envelope, res any, journaled bool) {
	var began *Admission
	if journaled {
		began = a
	}
	c.end(a.FutureID, a.Route, began, env, res, true)
}

// settle completes a scheduled future that did not run (refused, blocked
// by a dependency, denied a permit, interrupted) with env.
func (c *classState) settle(id, route string, env *Envelope) { c.end(id, route, nil, env, nil, false) }

// end makes future id terminal with env (res is what its run returned):
// inside one transaction the outcome of began (the attempt, when its
// intent was journaled), the runner's view and the future's completion
// with its arrival; then its waiters wake and its dependents are released
// or blocked. A failure leaves the future as it was: running, it gets its
// interruption rule at the next start. With handoff (the end of a run,
// whose slot is freed) the same commit also claims the next due future of
// the class for that slot (handoffTx), so a busy class needs one commit
// per attempt rather than three.
func (c *classState) end(id, route string, began *Admission, env *Envelope, res any, handoff bool) {
	d := c.d
	ctx := context.WithoutCancel(d.ctx)
	update, err := c.Runner.Ended(ctx, id, env, res)
	if err != nil {
		d.Log.Error("view of an ended future", "future", id, "err", err)
	}
	payload := d.Arrivals.Payload(ctx, route, id, env)
	now := time.Now()
	released := int64(0)
	var next []claimed
	err = d.DB.InTx(ctx, func(tx *sql.Tx) error {
		released = 0
		c.unregister(&next)
		if began != nil {
			if err := d.Gov.Finish(ctx, tx, began, env); err != nil {
				return fmt.Errorf("journal outcome: %w", err)
			}
			if d.AfterFinishHook != nil {
				d.AfterFinishHook(began)
			}
		}
		// The owner's view is written only with the completion: a late
		// settlement of a future that already ended (an expiry racing a
		// cancel) changes neither.
		changed, err := completedTx(ctx, d.DB, tx, id, route, env.State, payload, now)
		if err != nil || !changed {
			return err
		}
		if update != nil {
			if err := update(ctx, tx); err != nil {
				return err
			}
		}
		if env.State == primitive.StateCompleted {
			// A scheduled dependent whose dependencies have now all
			// completed is released in this commit (it needs no reference
			// resolved); the others are settled by releaseDependents.
			res, err := d.DB.TxExec(ctx, tx, releaseQuery, id)
			if err != nil {
				return fmt.Errorf("release the dependents of %s: %w", id, err)
			}
			released, _ = res.RowsAffected()
		}
		// Not after an outcome that opens an UNKNOWN: the hand-off's gate
		// reads committed state and would not see the gate this commit
		// closes; the scheduler's next turn admits after it.
		if handoff && (env.Error == nil || env.Error.Code != "unknown") {
			return c.handoffTx(ctx, tx, &next)
		}
		return nil
	})
	if err != nil {
		c.unregister(&next)
		d.Log.Error("record the end of a scheduled future", "future", id, "err", err)
		return
	}
	d.wake(id)
	for _, s := range next {
		d.wake(s.a.FutureID)
		d.wg.Add(1)
		go c.run(s)
	}
	if released > 0 {
		for _, c := range d.classes {
			c.wake()
		}
	}
	d.releaseDependents(id)
}

// handoffTx claims, inside tx (an ending run's), one due future for the
// slot that run frees, as claim would (admitted, and journaled when
// admitted), into *next; the caller starts it after the commit. The slot
// is not free yet when this runs (the ending run leaves the class's
// running set after its end is recorded), so the class briefly counts one
// more than its slots, which only makes its scheduler start nothing
// meanwhile. The claim is a savepoint of tx: when it fails, it is rolled
// back and the end commits without it (the scheduler, woken when the run
// leaves, claims again); its statements cannot be interrupted by a
// shutdown, which would roll the whole transaction back.
func (c *classState) handoffTx(ctx context.Context, tx *sql.Tx, next *[]claimed) error {
	d := c.d
	if d.ctx.Err() != nil {
		return nil // shutting down: nothing new starts
	}
	if c.Held != nil {
		// The operator's hold as stored, as schedule reads it: one set by
		// another process (the CLI) holds the class here too.
		if held, err := c.Held(ctx); err != nil || held {
			return nil
		}
	}
	if _, err := tx.ExecContext(ctx, `SAVEPOINT handoff`); err != nil {
		return fmt.Errorf("hand the slot on: %w", err)
	}
	err := c.claimTx(ctx, tx, time.Now().UnixMilli(), 1, next)
	if err == nil && d.ctx.Err() != nil {
		err = errHeld // shutdown began during the claim: nothing new starts
	}
	if err == nil {
		_, err = tx.ExecContext(ctx, `RELEASE handoff`)
		if err == nil {
			return nil
		}
	}
	c.unregister(next)
	if !errors.Is(err, errHeld) {
		d.Log.Error("hand a slot on", "class", c.Name, "err", err)
	}
	if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO handoff`); rerr != nil {
		return fmt.Errorf("roll the slot's hand-off back: %w", rerr)
	}
	if _, rerr := tx.ExecContext(ctx, `RELEASE handoff`); rerr != nil {
		return fmt.Errorf("roll the slot's hand-off back: %w", rerr)
	}
	return nil
}

// releaseQuery queues the waiting scheduled dependents of a completed
// future whose dependencies all completed. The unary + keeps SQLite from
// reaching them through futures_state (every waiting future) rather than
// through the future's own dependents (future_deps_dep).
const releaseQuery = `UPDATE futures SET state = 'queued' WHERE id IN (SELECT future_id FROM future_deps WHERE dep_id = ?)
	AND +state = 'waiting' AND +class IS NOT NULL
	AND NOT EXISTS (SELECT 1 FROM future_deps fd CROSS JOIN futures g ON g.id = fd.dep_id WHERE fd.future_id = futures.id AND g.state != 'completed')`

// classOf returns the scheduler of future id's class (nil for a call's
// future) and its route.
func (d *Dispatcher) classOf(ctx context.Context, id string) (*classState, string, error) {
	var class sql.NullString
	var route string
	if err := d.DB.R.QueryRowContext(ctx, `SELECT class, route FROM futures WHERE id = ?`, id).Scan(&class, &route); err != nil {
		return nil, "", err
	}
	c := d.classes[class.String]
	if class.Valid && c == nil {
		// Never treated as a call's future: it would run as a plain call.
		return nil, "", fmt.Errorf("future %s is of class %q, which this dispatcher does not run", id, class.String)
	}
	return c, route, nil
}

// recoverClass settles what a previous process left running of class c:
// an attempt that provably never started is queued again (not counted);
// under the rule "requeue" an interrupted one is queued again with the
// interruption counted; under "block" it ends blocked with outcome unknown
// (never replayed), which blocks its dependents.
func (d *Dispatcher) recoverClass(ctx context.Context, c *classState) error {
	type fut struct {
		id, route, prim, cmd, rule string
		attempts                   int
	}
	rows, err := d.DB.R.QueryContext(ctx, `SELECT id, route, primitive, COALESCE(command_id, ''), COALESCE(on_interrupt, ''), attempts
		FROM futures WHERE state = 'running' AND class = ? ORDER BY rowid`, c.Name)
	running, err := store.Collect(rows, err, func(r *sql.Rows) (f fut, err error) {
		return f, r.Scan(&f.id, &f.route, &f.prim, &f.cmd, &f.rule, &f.attempts)
	})
	if err != nil {
		return fmt.Errorf("find interrupted %s futures: %w", c.Name, err)
	}
	for _, f := range running {
		never, err := d.neverStarted(ctx, f.prim, f.cmd, f.id)
		if err != nil {
			return fmt.Errorf("recover future %s: %w", f.id, err)
		}
		switch {
		case never:
			_, err = d.DB.W.ExecContext(ctx, `UPDATE futures SET state = 'queued', attempts = attempts - 1, started_at = NULL WHERE id = ? AND state = 'running'`, f.id)
		case f.rule == OnInterruptRequeue:
			err = d.DB.InTx(ctx, func(tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, `UPDATE futures SET state = 'queued', interruptions = interruptions + 1, started_at = NULL WHERE id = ? AND state = 'running'`, f.id); err != nil {
					return err
				}
				return c.Runner.Requeued(ctx, tx, f.id, f.attempts)
			})
		default:
			if _, err = d.DB.W.ExecContext(ctx, `UPDATE futures SET outcome = 'unknown', interruptions = interruptions + 1 WHERE id = ?`, f.id); err != nil {
				break
			}
			env := &Envelope{State: primitive.StateBlocked, Primitive: f.prim, CommandID: f.cmd, Error: &ErrorBody{Code: "unknown",
				Message: fmt.Sprintf("Hearth stopped while attempt %d was running; not replayed (on_interrupt: block). Re-read what it may have changed before resubmitting.", f.attempts)}}
			c.settle(f.id, f.route, env)
		}
		if err != nil {
			return fmt.Errorf("recover future %s: %w", f.id, err)
		}
	}
	// Held for an UNKNOWN: admitted afresh (held.go), so that a reconcile
	// whose release a crash cut short holds nothing for good.
	if _, err := d.DB.W.ExecContext(ctx, `UPDATE futures SET state = 'queued' WHERE state = 'held' AND class = ?`, c.Name); err != nil {
		return fmt.Errorf("release %s futures held for an UNKNOWN: %w", c.Name, err)
	}
	return nil
}
