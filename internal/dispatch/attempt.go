package dispatch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// start runs claimed attempt s on a goroutine of its own (the one way an
// attempt starts).
func (c *scheduler) start(s claimed) { c.d.spawn(func() { c.run(s) }) }

// run carries out one claimed attempt: admitted by its claim as a fresh
// call would be admitted now (see admit), it is parked for a permit or
// refused as the gate decided, or (journaled with the claim) run; then its
// end is recorded. When Hearth is shutting down and the run was stopped
// for that reason, nothing is recorded: the future stays
// running and the next start applies its interruption rule. The gate is
// gate's without two steps that belong to a client's call: command-id
// replay (an attempt's command id is the engine's, never a client's) and
// the observing gates (an attempt is no call of the conversation's).
func (c *scheduler) run(s claimed) {
	d, a := c.d, s.a
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
	// stopped is the end of an attempt stopped on purpose: known, so the
	// journal records it as stopped, by what (never UNKNOWN).
	stopped := func(why Stop) *Envelope {
		return &Envelope{State: primitive.StateCancelled, Primitive: name, Error: &ErrorBody{Code: "cancelled", Message: why.Why,
			Details: map[string]any{callpath.StoppedByKey: why.By}}}
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
		c.settleAttempt(a, env, nil, false)
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
	c.settleAttempt(a, env, res, true)
}

// unstarted settles an attempt whose intent was journaled (by its claim)
// but which Hearth began shutting down before starting: its command's
// outcome says it never started, and the future is queued again, so the
// next start runs it as a new attempt rather than applying its
// interruption rule to something that never ran (an UNKNOWN under
// on_interrupt "block"). If this cannot be recorded, the future stays
// running and the next start's recovery decides, as before.
func (c *scheduler) unstarted(a *Admission) {
	d := c.d
	ctx := context.WithoutCancel(d.ctx)
	env := &Envelope{State: primitive.StateCancelled, Primitive: a.Spec.Name(), CommandID: a.CommandID, Error: &ErrorBody{Code: "cancelled",
		Message: "Hearth stopped before this attempt started; it runs again as a new attempt when Hearth starts"}}
	err := d.DB.InTx(ctx, func(tx *sql.Tx) error {
		n, err := toQueued(ctx, inTx(tx), queueMove{id: a.FutureID, from: "running"})
		if err != nil {
			return err
		}
		if n == 0 {
			return errNotRunning
		}
		return d.Gov.Finish(ctx, tx, a, env)
	})
	if err != nil && !errors.Is(err, errNotRunning) {
		d.Log.Error("requeue an attempt that never started", "future", a.FutureID, "err", err)
	}
}

func (c *scheduler) runSafely(ctx context.Context, call *primitive.Call) (res any, err error) {
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
func (c *scheduler) park(a *Admission) {
	d := c.d
	ctx := context.WithoutCancel(d.ctx)
	_, err := d.Gov.RequestPermit(ctx, a, func(ctx context.Context, tx *sql.Tx, pid string) error {
		if err := toPermit(ctx, tx, a.FutureID, true); err != nil {
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

// settleAttempt records an attempt's end: the journal's outcome (when it began),
// the runner's view, the future's completion and its arrival in one
// transaction; then its dependents are released or blocked.
func (c *scheduler) settleAttempt(a *Admission, env *Envelope, res any, journaled bool) {
	var began *Admission
	if journaled {
		began = a
	}
	c.settleWith(a.FutureID, a.Route, began, env, res, true)
}

// settle completes a scheduled future that did not run (refused, blocked
// by a dependency, denied a permit, interrupted) with env.
func (c *scheduler) settle(id, route string, env *Envelope) {
	c.settleWith(id, route, nil, env, nil, false)
}

// settleWith makes future id terminal with env (res is what its run returned):
// inside one transaction the outcome of began (the attempt, when its
// intent was journaled), the runner's view and the future's completion
// with its arrival; then its waiters wake and its dependents are released
// or blocked. A failure leaves the future as it was: running, it gets its
// interruption rule at the next start. With handoff (the end of a run,
// whose slot is freed) the same commit also claims the next due future of
// the class for that slot (handoffTx), so a busy class needs one commit
// per attempt rather than three.
func (c *scheduler) settleWith(id, route string, began *Admission, env *Envelope, res any, handoff bool) {
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
			if d.seams.hooks.AfterFinish != nil {
				d.seams.hooks.AfterFinish(began)
			}
		}
		// The owner's view is written only with the completion: a late
		// settlement of a future that already ended (an expiry racing a
		// cancel) changes neither.
		changed, err := settleTx(ctx, d.DB, tx, id, route, env.State, payload, now)
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
			released, err = toQueued(ctx, futureWrite{db: d.DB, tx: tx}, queueMove{dependentsOf: id})
			if err != nil {
				return fmt.Errorf("release the dependents of %s: %w", id, err)
			}
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
		c.start(s)
	}
	if released > 0 {
		for _, c := range d.classes {
			c.wake()
		}
	}
	d.releaseDependents(id)
}
