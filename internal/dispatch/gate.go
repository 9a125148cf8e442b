package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// The call's admission, its envelope and the Governor contract live in
// callpath, which governance shares without importing the engine.
type (
	Admission = callpath.Admission
	Governor  = callpath.Governor
)

// ErrPermitRequired is returned by Governor.Admit when the call may run
// only after the operator approves it.
var ErrPermitRequired = callpath.ErrPermitRequired

func journaled(spec *primitive.Spec) bool { return callpath.Journaled(spec) }

// ChildCommandID derives the command id of the i-th call a compound
// command (a scatter, a recipe run) submits: a repeat of the parent is
// answered by its replay, and the children of two parents never share an
// id.
func ChildCommandID(parent, kind string, i int) string {
	if parent == "" {
		return ""
	}
	return fmt.Sprintf("%s/%s%d", parent, kind, i)
}

// NewAdmission builds the admission of req, generating ids as needed.
func NewAdmission(req Request, futureID string) *Admission {
	sum := sha256.Sum256(req.Input)
	var digest [2 * sha256.Size]byte
	a := &Admission{Spec: req.Spec, Route: req.Route, CommandID: req.CommandID, FutureID: futureID, Input: req.Input,
		Digest: string(hex.AppendEncode(digest[:0], sum[:]))}
	if a.FutureID == "" {
		a.FutureID = primitive.NewID("fut")
	}
	if a.CommandID == "" && a.SideEffecting() {
		a.CommandID = primitive.NewID("cmd")
	}
	return a
}

// gate runs replay and admission. It returns a non-nil envelope when the
// call must not run now (replayed, refused or parked for a permit).
func (d *Dispatcher) gate(ctx context.Context, a *Admission, park bool) *Envelope {
	name := a.Spec.Name()
	if env := d.checks(ctx, a); env != nil {
		return env
	}
	if a.SideEffecting() {
		env, err := d.Gov.Replay(ctx, a)
		if err != nil {
			return ErrorEnvelope(name, err)
		}
		if env != nil {
			return env
		}
	}
	err := d.Gov.Admit(ctx, a)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrPermitRequired) && park:
		return d.park(ctx, a)
	case errors.Is(err, ErrPermitRequired):
		return ErrorEnvelope(name, primitive.Blocked("permit_required", "%s needs an operator permit here and cannot wait for one", name))
	}
	env := ErrorEnvelope(name, err)
	env.CommandID = a.CommandID
	return env
}

// checks runs what every admission path applies before governance: the
// primitive's Precheck (input that can never run) and the gates.
func (d *Dispatcher) checks(ctx context.Context, a *Admission) *Envelope {
	if err := precheck(a); err != nil {
		return ErrorEnvelope(a.Spec.Name(), err)
	}
	for _, g := range d.Gates {
		if err := g(ctx, a.Spec, a.Route); err != nil {
			return ErrorEnvelope(a.Spec.Name(), err)
		}
	}
	return nil
}

func precheck(a *Admission) error {
	if a.Spec.Precheck == nil {
		return nil
	}
	return a.Spec.Precheck(a.Input)
}

// park stores the call as a future awaiting the operator's permit.
func (d *Dispatcher) park(ctx context.Context, a *Admission) *Envelope {
	name := a.Spec.Name()
	req := Request{Route: a.Route, Spec: a.Spec, Input: a.Input, CommandID: a.CommandID}
	if _, err := d.insertFuture(ctx, a.FutureID, req, "permit"); err != nil {
		return d.commandTaken(ctx, a, err)
	}
	pid, err := d.Gov.RequestPermit(ctx, a, nil)
	if err != nil {
		d.complete(a.FutureID, a.Route, ErrorEnvelope(name, err))
		return ErrorEnvelope(name, err)
	}
	return &Envelope{State: primitive.StatePending, Primitive: name, FutureID: a.FutureID, PermitID: pid, CommandID: a.CommandID,
		Result: map[string]any{"waiting_for": "operator permit", "permit_id": pid}}
}

// execute runs an admitted call, journaling it when it has side effects.
// Its outcome is recorded through link (see record): journaled, and the
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
			d.record(a, env, a.Approved && env.Error != nil && env.Error.Code == "estop", link)
			return env
		}
	}
	call := &primitive.Call{Route: a.Route, FutureID: a.FutureID, CommandID: a.CommandID, Checked: a.Checked()}
	res, err := d.runSafely(ctx, a.Spec, call, a.Input)
	env := outcome(name, res, err)
	stopped(ctx, name, env)
	env.CommandID = a.CommandID
	d.record(a, env, journaled, link)
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
		env.State = primitive.StateCancelled
		env.Error = &ErrorBody{Code: "cancelled", Message: fmt.Sprintf("%s was stopped (%s) before it finished", name, stopCause(ctx)), Details: details}
	}
}

// stopCause words why ctx ended, in Hearth's words rather than Go's
// ("context canceled"): the e-stop, or Hearth shutting down.
func stopCause(ctx context.Context) string {
	if errors.Is(context.Cause(ctx), ErrEStop) {
		return ErrEStop.Error()
	}
	return "Hearth is shutting down"
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
