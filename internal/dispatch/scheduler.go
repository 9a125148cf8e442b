package dispatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// scheduler starts the futures of one class: it claims what is due
// within the class's slots, runs each attempt and settles it.
type scheduler struct {
	Class
	d       *Dispatcher
	wakeCh  chan struct{}
	mu      sync.Mutex
	running map[string]*classRun
	held    bool
}

func (c *scheduler) wake() {
	select {
	case c.wakeCh <- struct{}{}:
	default:
	}
}

// startClasses starts every class's scheduler (after recovery).
func (d *Dispatcher) startClasses() {
	for _, c := range d.classes {
		d.spawn(c.loop)
	}
}

// loop is a class's scheduler. Each turn starts what is due within the
// class's slots, then sleeps until the next due time, a wake-up or
// shutdown. Futures waiting on dependencies need no timer: their release
// wakes the loop.
func (c *scheduler) loop() {
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
func (c *scheduler) schedule() (time.Time, error) {
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
		c.start(s)
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
	// The claim also admitted the attempt, and journaled its intent in
	// the commit that claimed it unless permit says it is to be parked for
	// the operator's permit or refused why it does not run.
	permit  bool
	refused error
}

var errHeld = errors.New("class held")

// claim marks up to n due futures running (attempts+1, the attempt's
// command id) in one transaction. Each is registered as running before
// the commit, so a stop that sees the committed state always finds it.
// Each attempt is also admitted by the gate (admit) and, when admitted,
// its intent journaled in that same commit (Governor.BeginTx: one commit
// for the claim and the intent instead of one each);
// run carries out the rest. After the commit their waiters wake: queued
// → running is a change.
func (c *scheduler) claim(now int64, n int) ([]claimed, error) {
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
func (c *scheduler) unregister(out *[]claimed) {
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
// class is held), admits each and journals the admitted ones. On an error the caller unregisters *out.
func (c *scheduler) claimTx(ctx context.Context, tx *sql.Tx, now int64, n int, out *[]claimed) error {
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
	started := time.Now()
	var as []claimed
	for _, x := range ds {
		cmd := RunCommandID(x.id, x.attempts+1)
		if _, err := toRunning(ctx, futureWrite{db: d.DB, tx: tx}, x.id, started, cmd); err != nil {
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
	for i := first; i < len(*out); i++ {
		if err := c.admit(ctx, tx, &(*out)[i]); err != nil {
			return err
		}
	}
	return nil
}

// register records as as running (unless the class is held), each with
// its own context, into *out.
func (c *scheduler) register(as []claimed, out *[]claimed) error {
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
func (c *scheduler) admit(ctx context.Context, tx *sql.Tx, s *claimed) error {
	if s.gone {
		return nil
	}
	v, err := c.d.admit(s.ctx, s.a, admitOpts{claimed: true, begin: func(a *Admission) error { return c.d.Gov.BeginTx(ctx, tx, a) }})
	if err != nil {
		return fmt.Errorf("journal the intent of %s: %w", s.a.CommandID, err)
	}
	s.refused, s.permit = v.refused, v.permit
	return nil
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
func (c *scheduler) handoffTx(ctx context.Context, tx *sql.Tx, next *[]claimed) error {
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
