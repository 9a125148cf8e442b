// Package dispatch runs every primitive call through one path: gate,
// future, inline budget race, outcome, mailbox arrival. A call that
// finishes within the inline budget answers directly and leaves no durable
// trace beyond its side effects; a slower or detached call becomes a
// durable future whose terminal result is queued in its conversation's
// mailbox and piggybacked on that conversation's later responses. Durable
// jobs are futures of this one engine too, admitted as scheduled work of a
// class (class.go): a due time, the class's own slots, counted attempts
// and an interruption rule are options of a future, not a second engine.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/artifacts"
	"github.com/hearth-dev/hearth/internal/fortest"
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
	// MaxFutures bounds how many calls' futures run at once
	// (max_concurrent_futures); scheduled classes have their own slots.
	MaxFutures int
	// Classes are the kinds of scheduled futures (class.go), each with
	// its own slots and runner.
	Classes []Class
	// HooksForTest are seams for crash and shutdown tests, which start a
	// whole Hearth with them; a program leaves them zero, and New stops a
	// program that sets them (fortest.Must).
	HooksForTest Hooks
}

// Hooks are the points in a future's life where a crash or shutdown test
// acts (kills the process, stops the dispatcher). Only tests set them,
// through Options.HooksForTest; a nil hook does nothing.
type Hooks struct {
	// AfterFinish is called inside the transaction that journals a call's
	// outcome, after Governor.Finish and before the call's future is
	// completed.
	AfterFinish func(a *Admission)
	// Claimed is called after a queued future was claimed and admitted,
	// just before its intent is journaled. For a call's queued future
	// (runQueued) that is after the claim committed: the gap in which a
	// crash leaves a running future that never started. For a scheduled
	// future it runs inside the transaction that claims (the scheduler's,
	// or an ending run's hand-off), and a crash there leaves the future
	// queued.
	Claimed func(a *Admission)
}

// New builds a dispatcher complete: nothing is connected afterwards. A
// dispatcher without a governor would run calls ungoverned, so it is
// refused.
func New(o Options) (*Dispatcher, error) {
	if o.HooksForTest.AfterFinish != nil || o.HooksForTest.Claimed != nil {
		fortest.Must()
	}
	switch {
	case o.Gov == nil:
		return nil, errors.New("build the dispatcher: a governor is required")
	case o.DB == nil || o.Registry == nil:
		return nil, errors.New("build the dispatcher: a database and a registry are required")
	case o.MaxFutures < 1:
		return nil, fmt.Errorf("build the dispatcher: MaxFutures is %d; at least one call's future must be able to run", o.MaxFutures)
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	arrivals := o.Arrivals
	if arrivals == nil {
		arrivals = &Arrivals{Artifacts: o.Artifacts, MaxResultBytes: o.MaxResultBytes, Log: log}
	}
	d := &Dispatcher{DB: o.DB, Registry: o.Registry, Artifacts: o.Artifacts, Log: log, Gov: o.Gov,
		Gates: append([]Gate(nil), o.Gates...), Budget: o.Budget, Arrivals: arrivals,
		MaxArrivals: o.MaxArrivals, MaxArrivalBytes: o.MaxArrivalBytes, seams: seams{hooks: o.HooksForTest},
		slots: make(chan struct{}, o.MaxFutures), wakers: map[string][]chan struct{}{}}
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
	Gov   Governor
	seams seams // fortest.go; zero in the program
	workState
	mailbox mailboxCache // mailbox.go

	ctx    context.Context // app context: running work outlives requests
	cancel context.CancelFunc
	slots  chan struct{} // generic future concurrency cap
	wg     sync.WaitGroup
	mu     sync.Mutex
	wakers map[string][]chan struct{} // future id → waiters
	// classes are the schedulers of scheduled futures, by class name.
	classes map[string]*scheduler
}

// Start prepares the dispatcher: it settles futures left by a previous
// process (interrupted running work becomes blocked with outcome unknown,
// never replayed; work that provably never started, and queued work, is
// started) and begins accepting calls.
func (d *Dispatcher) Start(ctx context.Context) error {
	if d.Gov == nil || d.slots == nil {
		return errors.New("start the dispatcher: it was not built by New")
	}
	d.workMu.Lock()
	d.ctx, d.cancel = context.WithCancel(context.WithoutCancel(ctx))
	d.workMu.Unlock()
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
