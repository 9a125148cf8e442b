package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

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

// admitOpts are the steps of admission that differ by where the work
// starts: a client's call (gates, replay) or work the engine claimed to
// run now (the claim hook, the journal's intent).
type admitOpts struct {
	// gates: a client's call is seen by the observing gates; an attempt
	// of the engine's is no call of the conversation's.
	gates bool
	// replay: a known command id is answered by its stored outcome (a
	// client's call; an attempt's command id is the engine's, and a
	// submit checked ahead of its run is replayed by its submitter).
	replay bool
	// claimed: the work was claimed to run now; the Claimed hook runs before
	// its intent is journaled.
	claimed bool
	// begin, when set, journals the admitted intent. A refusal by the
	// journal (a *primitive.Error, such as the e-stop read again) refuses
	// the work; any other error is returned.
	begin func(*Admission) error
}

// verdict is what admission decided.
type verdict struct {
	// replayed is a known command's stored answer (a client's call only).
	replayed *Envelope
	// refused says why the work does not run; governed, that the governor
	// (or its journal) refused it rather than the input or a gate.
	refused  error
	governed bool
	// permit: the work may run only after the operator's permit.
	permit bool
}

// admit is the one admission of the engine, for every way work starts (a
// call, a queued call's future, a scheduled attempt, a submit checked
// ahead of its run): the primitive's Precheck (input that can never run),
// for a client's call the gates and command-id replay, the governor's
// Admit (e-stop, policy, allow-rules, the UNKNOWN gate), then, for
// claimed work, the claim hook and the journal's intent.
func (d *Dispatcher) admit(ctx context.Context, a *Admission, o admitOpts) (verdict, error) {
	if err := precheck(a); err != nil {
		return verdict{refused: err}, nil
	}
	if o.gates {
		for _, g := range d.Gates {
			if err := g(ctx, a.Spec, a.Route); err != nil {
				return verdict{refused: err}, nil
			}
		}
	}
	if o.replay && a.SideEffecting() {
		env, err := d.Gov.Replay(ctx, a)
		if err != nil {
			return verdict{refused: err}, nil
		}
		if env != nil {
			return verdict{replayed: env}, nil
		}
	}
	switch err := d.Gov.Admit(ctx, a); {
	case errors.Is(err, ErrPermitRequired):
		return verdict{permit: true}, nil
	case err != nil:
		return verdict{refused: err, governed: true}, nil
	}
	if o.claimed && d.seams.hooks.Claimed != nil {
		d.seams.hooks.Claimed(a)
	}
	if o.begin == nil {
		return verdict{}, nil
	}
	if err := o.begin(a); err != nil {
		var pe *primitive.Error
		if errors.As(err, &pe) {
			return verdict{refused: pe, governed: true}, nil
		}
		return verdict{}, err
	}
	return verdict{}, nil // admitted, and its intent journaled when begin was given
}

// gate admits a client's call. It returns a non-nil envelope when the
// call must not run now (replayed, refused or parked for a permit).
func (d *Dispatcher) gate(ctx context.Context, a *Admission, park bool) *Envelope {
	name := a.Spec.Name()
	v, _ := d.admit(ctx, a, admitOpts{gates: true, replay: true}) // no begin: no error
	switch {
	case v.replayed != nil:
		return v.replayed
	case v.permit && park:
		return d.park(ctx, a)
	case v.permit:
		return ErrorEnvelope(name, primitive.Blocked("permit_required", "%s needs an operator permit here and cannot wait for one", name))
	case v.refused != nil:
		env := ErrorEnvelope(name, v.refused)
		if v.governed {
			env.CommandID = a.CommandID
		}
		return env
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
	if err := d.insertFuture(ctx, a.FutureID, req, "permit"); err != nil {
		return d.commandTaken(ctx, a, err)
	}
	pid, err := d.Gov.RequestPermit(ctx, a, nil)
	if err != nil {
		d.settleFuture(a.FutureID, a.Route, ErrorEnvelope(name, err))
		return ErrorEnvelope(name, err)
	}
	return &Envelope{State: primitive.StatePending, Primitive: name, FutureID: a.FutureID, PermitID: pid, CommandID: a.CommandID,
		Result: map[string]any{"waiting_for": "operator permit", "permit_id": pid}}
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
