// Package control carries out on Hearth's engines what governance decides.
// Governance (internal/govern) records each decision — a permit approved,
// denied or expired, an e-stop, a resumed queue — and returns what it
// leaves to do; it never holds the engines. control holds them (the
// dispatcher, whose job class is the durable job queue) and does it: it releases approved parked
// work and settles refused work, stops running work when the e-stop
// latches, and wakes the queue on resume. It also runs the permit expiry
// loop and, at start-up, carries out the decisions a previous process
// committed but was stopped before carrying out.
//
// Calls go down only: control calls govern and the engines; neither calls
// back.
package control

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/proc"
	"github.com/hearth-dev/hearth/internal/session"
)

// Operator is the human operator's API over a running Hearth, for the
// panel and the tray: each decision is recorded by governance first
// (committed), then carried out on the engines. No MCP tool reaches it.
type Operator struct {
	gov    *govern.Governor
	rec    *govern.Decisions
	engine *dispatch.Dispatcher
	// sessions are the model's interactive programs, which the e-stop
	// kills.
	sessions *session.Manager
	// opened are the apps Hearth started for the person (ui.open), whose
	// trees the e-stop kills.
	opened *proc.Started
	log    *slog.Logger

	stopLoop context.CancelFunc
	loopDone chan struct{}
}

// New builds the operator's API over gov and the engines it carries
// decisions out on (the e-stop also closes the interactive sessions and
// kills the apps Hearth opened, opened). Each part is required.
func New(gov *govern.Governor, engine *dispatch.Dispatcher, sessions *session.Manager, opened *proc.Started, log *slog.Logger) (*Operator, error) {
	switch {
	case gov == nil:
		return nil, errors.New("build the operator's controls: a governor is required")
	case engine == nil:
		return nil, errors.New("build the operator's controls: a dispatcher is required")
	case sessions == nil:
		return nil, errors.New("build the operator's controls: a session manager is required")
	case opened == nil:
		return nil, errors.New("build the operator's controls: the set of apps Hearth opened is required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Operator{gov: gov, rec: &govern.Decisions{G: gov}, engine: engine, sessions: sessions, opened: opened, log: log}, nil
}

// Approve approves a pending permit once and releases the parked work,
// which runs exactly its journaled input; with always set, the rule is
// added with the approval.
func (o *Operator) Approve(ctx context.Context, permitID, operator string, always *govern.Rule) error {
	d, err := o.rec.Approve(ctx, permitID, operator, always)
	if err != nil {
		return err
	}
	return o.carryOut(ctx, d)
}

// Deny denies a pending permit; the parked call arrives as blocked.
func (o *Operator) Deny(ctx context.Context, permitID, operator string) error {
	d, err := o.rec.Deny(ctx, permitID, operator)
	if err != nil {
		return err
	}
	return o.carryOut(ctx, d)
}

// EStop latches the emergency stop on the operator's behalf and stops
// what runs.
func (o *Operator) EStop(ctx context.Context, operator, reason string) error {
	if err := o.rec.EStop(ctx, operator, reason); err != nil {
		return err
	}
	halt(ctx, o.gov, o.engine, o.sessions, o.opened, o.log)
	return nil
}

// ResumeQueue releases a held job queue and wakes it. Refused while the
// e-stop is latched.
func (o *Operator) ResumeQueue(ctx context.Context, operator string) error {
	if err := o.rec.ResumeQueue(ctx, operator); err != nil {
		return err
	}
	o.engine.Resume(jobs.Class)
	return nil
}

// Reset releases the e-stop latch and nothing else: a held queue stays
// held until ResumeQueue.
func (o *Operator) Reset(ctx context.Context, operator string) error {
	return o.rec.Reset(ctx, operator)
}

// Permits lists permits in state ("" for all), newest first.
func (o *Operator) Permits(ctx context.Context, state string) ([]govern.Permit, error) {
	return o.rec.Permits(ctx, state)
}

// Denials lists the denials that still answer their call again at once
// (govern.DenialHold), newest first.
func (o *Operator) Denials(ctx context.Context) ([]govern.Permit, error) {
	return o.rec.Denials(ctx)
}

// AskAgain ends a denial's hold: the next identical call asks the
// operator again. Nothing is parked on a denial, so there is nothing to
// carry out.
func (o *Operator) AskAgain(ctx context.Context, permitID, operator string) error {
	return o.rec.AskAgain(ctx, permitID, operator)
}

// AddRule adds an allow-rule for program in cwdRoot covering the calls
// whose arguments begin with args.
func (o *Operator) AddRule(ctx context.Context, operator, program, cwdRoot string, args ...string) (govern.Rule, error) {
	return o.rec.AddRule(ctx, operator, program, cwdRoot, args...)
}

// RemoveRule removes an allow-rule.
func (o *Operator) RemoveRule(ctx context.Context, operator, id string) error {
	return o.rec.RemoveRule(ctx, operator, id)
}

// Reconcile closes an UNKNOWN outcome on the operator's word and
// releases the durable jobs it held (reconcile.go): they run now.
func (o *Operator) Reconcile(ctx context.Context, operator, commandID, observed string) error {
	if err := o.rec.Reconcile(ctx, operator, commandID, observed); err != nil {
		return err
	}
	if _, err := o.engine.ReleaseHeld(ctx); err != nil {
		// Committed: the next start releases them.
		o.log.Error("release the jobs an UNKNOWN held", "command", commandID, "err", err)
	}
	return nil
}

// SetPolicy changes the policy mode.
func (o *Operator) SetPolicy(ctx context.Context, operator, mode string) error {
	return o.rec.SetPolicy(ctx, operator, mode)
}

// ExpirePermits expires every pending permit past its expiry; each parked
// call arrives as blocked. The expiry loop calls it when the earliest one
// is due.
func (o *Operator) ExpirePermits(ctx context.Context) error {
	ds, err := o.gov.ExpirePermits(ctx)
	for _, d := range ds {
		err = errors.Join(err, o.carryOut(ctx, d))
	}
	return err
}

// Recover carries out what the work still parked for a decided permit
// waits for (govern.Governor.Parked): the decisions a previous process
// committed but was stopped before carrying out, so an approval committed
// just before a crash still runs its call once. It runs once the
// dispatcher has started (it runs what it releases; a released job is
// claimed by its class's scheduler). A decision that cannot be carried
// out is logged; the next start tries it again.
func (o *Operator) Recover(ctx context.Context) error {
	ds, err := o.gov.Parked(ctx)
	if err != nil {
		return err
	}
	for _, d := range ds {
		if err := o.carryOut(ctx, d); err != nil {
			o.log.Error("carry out a permit decision left by the previous run", "permit", d.PermitID, "future", d.FutureID, "err", err)
		}
	}
	return nil
}

// carryOut does what d leaves to do to the future parked for its permit
// (a durable job's attempt is one): release it to run once, or settle it
// blocked.
func (o *Operator) carryOut(ctx context.Context, d govern.Decision) error {
	if d.Approved() {
		return o.engine.ReleaseApproved(ctx, d.FutureID)
	}
	o.engine.Settle(d.FutureID, d.Envelope())
	return nil
}

// Start runs the permit expiry loop until Stop: it expires what is past
// due at once (a permit may have expired while Hearth was stopped), then
// sleeps until the earliest pending permit expires or a new one is
// requested.
func (o *Operator) Start(ctx context.Context) {
	ctx, o.stopLoop = context.WithCancel(context.WithoutCancel(ctx))
	o.loopDone = make(chan struct{})
	go o.expireLoop(ctx)
}

// Stop stops the expiry loop and waits for it.
func (o *Operator) Stop() {
	if o.stopLoop == nil {
		return
	}
	o.stopLoop()
	<-o.loopDone
}

// retryExpiry is how soon the expiry loop looks again after it could not
// read the permits.
const retryExpiry = time.Minute

func (o *Operator) expireLoop(ctx context.Context) {
	defer close(o.loopDone)
	requested := o.gov.PermitRequested()
	for {
		if err := o.ExpirePermits(ctx); err != nil && ctx.Err() == nil {
			o.log.Error("expire permits", "err", err)
		}
		wait, pending, err := o.gov.NextExpiry(ctx)
		if err != nil && ctx.Err() == nil {
			o.log.Error("find the next permit expiry", "err", err)
			wait, pending = retryExpiry, true
		}
		var due <-chan time.Time
		var timer *time.Timer
		if pending {
			timer = time.NewTimer(wait)
			due = timer.C
		}
		select {
		case <-ctx.Done():
		case <-due:
		case <-requested:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}
