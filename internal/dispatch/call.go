package dispatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
)

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
		if err := d.insertFuture(ctx, a.FutureID, req, "queued"); err != nil {
			return d.commandTaken(ctx, a, err)
		}
		d.startQueued(a.FutureID, req, false)
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
	d.spawn(func() { done <- d.execute(work, a, link) })
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
		now := time.Now().UnixMilli()
		r := callRecord(a.FutureID, req, "running")
		r.started = now
		if err := insertFutureTx(ctx, tx, r, now); err != nil {
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
// future has nothing to record (see settleCall).
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

// execute runs an admitted call, journaling it when it has side effects.
// Its outcome is recorded through link (see settleCall): journaled, and the
// call's future completed when it has one, in one transaction.
func (d *Dispatcher) execute(ctx context.Context, a *Admission, link *callLink) *Envelope {
	name := a.Spec.Name()
	journaled := a.SideEffecting()
	if journaled {
		if err := d.Gov.Begin(ctx, a); err != nil {
			env := ErrorEnvelope(name, err)
			// An approved call the e-stop refused here has its outcome
			// journaled after its approval (no other refusal: a taken
			// command id's outcome belongs to that command).
			d.settleCall(a, env, a.Approved && env.Error != nil && env.Error.Code == "estop", link)
			return env
		}
	}
	call := &primitive.Call{Route: a.Route, FutureID: a.FutureID, CommandID: a.CommandID, Checked: a.Checked()}
	res, err := d.runSafely(ctx, a.Spec, call, a.Input)
	env := outcome(name, res, err)
	stopped(ctx, name, env)
	env.CommandID = a.CommandID
	d.settleCall(a, env, journaled, link)
	return env
}

// stopped marks env cancelled when the work context ctx was cancelled (an
// e-stop or shutdown) while the primitive ran: whatever it returned, it did
// not finish on its own. What it reported stays: its result, and the
// details of its error (a recipe run's per-step trace says which steps
// ran).
func stopped(ctx context.Context, name string, env *Envelope) {
	if ctx.Err() != nil {
		var details map[string]any
		if env.Error != nil {
			details = env.Error.Details
		}
		by, words := stopCause(ctx)
		if details == nil {
			details = map[string]any{}
		}
		// Hearth stopped it itself, so its end is known: the journal
		// records it as stopped, by this (never UNKNOWN, which is for
		// what Hearth cannot know: a crash, a lost power).
		details[callpath.StoppedByKey] = by
		env.State = primitive.StateCancelled
		env.Error = &ErrorBody{Code: "cancelled", Message: fmt.Sprintf("%s was stopped (%s) before it finished; what it did until then stays done, and nothing of it runs any more", name, words), Details: details}
	}
}

// stopCause says why ctx ended: a short code for the records
// (callpath.StoppedByEStop or StoppedByShutdown) and Hearth's words rather
// than Go's ("context canceled").
func stopCause(ctx context.Context) (by, words string) {
	if errors.Is(context.Cause(ctx), ErrEStop) {
		return callpath.StoppedByEStop, ErrEStop.Error()
	}
	return callpath.StoppedByShutdown, "Hearth was stopping (quit, restart or update)"
}

// ErrEStop is the cause of the work context's cancellation by an e-stop.
var ErrEStop = errors.New("emergency stop")

// workCtx returns the context running work derives from; CancelRunning
// cancels it (killing process trees) and starts a fresh one.
func (d *Dispatcher) workCtx() context.Context {
	d.workMu.Lock()
	defer d.workMu.Unlock()
	if d.work == nil {
		d.work, d.workCancel = context.WithCancelCause(d.ctx)
	}
	return d.work
}

// CancelRunning cancels every running primitive (an e-stop).
func (d *Dispatcher) CancelRunning(cause error) {
	d.workMu.Lock()
	defer d.workMu.Unlock()
	if d.ctx == nil {
		return // not started: nothing runs yet
	}
	if d.workCancel != nil {
		d.workCancel(cause)
	}
	d.work, d.workCancel = context.WithCancelCause(d.ctx)
}

type workState struct {
	workMu     sync.Mutex
	work       context.Context
	workCancel context.CancelCauseFunc
}
