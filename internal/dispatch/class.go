package dispatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
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
	r := newFuture{id: s.ID, route: s.Route, primitive: s.Primitive, input: s.Input, state: state, detached: true,
		finished: finished, result: result, class: s.Class, runAt: s.RunAt.UnixMilli(), onInterrupt: s.OnInterrupt}
	if s.Parent != "" {
		r.parent = s.Parent
	}
	if err := insertFutureTx(ctx, tx, r, now); err != nil {
		return err
	}
	for _, dep := range s.Deps {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO future_deps(future_id, dep_id) VALUES (?,?)`, s.ID, dep); err != nil {
			return fmt.Errorf("record dependency of %s: %w", s.ID, err)
		}
	}
	return nil
}

type classRun struct {
	cancel context.CancelFunc
	// why, when set, says who stopped the run on purpose (task.cancel,
	// the e-stop); a run stopped without it was stopped by a shutdown.
	why  atomic.Pointer[Stop]
	done chan struct{}
}

// Stop is why a scheduled run was stopped on purpose: By is what stopped
// it, for the journal (callpath.StoppedByEStop, StoppedByCancel), Why the
// words its end reports.
type Stop struct{ By, Why string }

func (r *classRun) stop(why Stop) {
	r.why.CompareAndSwap(nil, &why)
	r.cancel()
}

// newClasses builds the schedulers of cs. A class needs a name, unique
// among them, and a runner.
func newClasses(d *Dispatcher, cs []Class) (map[string]*scheduler, error) {
	out := map[string]*scheduler{}
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
		out[c.Name] = &scheduler{Class: c, d: d, wakeCh: make(chan struct{}, 1), running: map[string]*classRun{}}
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

// Hold stops class from starting anything and stops every running future
// of it, which ends cancelled, stopped by why. Only Resume releases it.
func (d *Dispatcher) Hold(class string, why Stop) {
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

// StopRun stops the running scheduled future id of class, stopped by why,
// and waits, within ctx, until its end is recorded, or until the claim it
// found is given up (its transaction did not commit: the future is queued
// again, and the caller may cancel it as queued). It reports whether the
// future was running here.
func (d *Dispatcher) StopRun(ctx context.Context, class, id string, why Stop) bool {
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

// classOf returns the scheduler of future id's class (nil for a call's
// future) and its route.
func (d *Dispatcher) classOf(ctx context.Context, id string) (*scheduler, string, error) {
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
