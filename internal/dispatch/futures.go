package dispatch

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// errCommandTaken is returned by insertFuture when another future already
// carries the request's command id.
var errCommandTaken = errors.New("another future already carries this command id")

// newFuture is a future's first durable record, as insertFutureTx
// writes it.
type newFuture struct {
	id, route, primitive string
	input                json.RawMessage
	state                string
	detached             bool
	// commandID is a call's command id (stored as given, "" included);
	// nil for a scheduled future, whose attempts have their own.
	commandID any
	// guard makes the insert conditional on no other future carrying
	// commandID (errCommandTaken).
	guard bool
	// started and finished are unix milliseconds, or nil; result is the
	// terminal envelope of a future settled at once, or nil.
	started, finished, result any
	// class, runAt, onInterrupt and parent are a scheduled future's (nil
	// for a call's).
	class, runAt, onInterrupt, parent any
}

// callRecord is the new future of a call's future (req) in state.
func callRecord(id string, req Request, state string) newFuture {
	return newFuture{id: id, route: req.Route, primitive: req.Spec.Name(), input: req.Input, state: state,
		detached: req.Detach, commandID: req.CommandID}
}

// insertFutureQuery is the one statement that creates a future.
const insertFutureQuery = `INSERT INTO futures(id, route, primitive, input, input_sha256, state, detached, created_at, started_at, finished_at, result,
		command_id, class, run_at, on_interrupt, parent)
	SELECT ?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,? WHERE NOT ? OR NOT EXISTS (SELECT 1 FROM futures WHERE command_id = ?)`

// insertFutureTx records future r through q (the writer, or a
// transaction), created now. Under governance a future is the first
// durable record of its command id, so with r.guard the insert is
// conditional on no other future carrying the id, in the same statement
// (writes are serialized on one connection): two calls racing with one
// command id past Replay create one future, and the loser gets
// errCommandTaken (see commandTaken).
func insertFutureTx(ctx context.Context, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, r newFuture, now int64) error {
	sum := sha256.Sum256(r.input)
	res, err := q.ExecContext(ctx, insertFutureQuery,
		r.id, r.route, r.primitive, string(r.input), hex.EncodeToString(sum[:]), r.state, boolInt(r.detached), now, r.started, r.finished, r.result,
		r.commandID, r.class, r.runAt, r.onInterrupt, r.parent, boolInt(r.guard), r.commandID)
	if err != nil {
		return fmt.Errorf("record future %s: %w", r.id, err)
	}
	if r.guard {
		if n, _ := res.RowsAffected(); n == 0 {
			return errCommandTaken
		}
	}
	return nil
}

// insertFuture records a call's future that has not started (queued, or
// parked for a permit), guarded by its command id when it is journaled.
func (d *Dispatcher) insertFuture(ctx context.Context, id string, req Request, state string) error {
	r := callRecord(id, req, state)
	r.guard = req.CommandID != "" && journaled(req.Spec)
	return insertFutureTx(context.WithoutCancel(ctx), d.DB.W, r, time.Now().UnixMilli())
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// spawn runs f on a goroutine of its own that Stop waits for.
func (d *Dispatcher) spawn(f func()) {
	d.wg.Add(1)
	go d.spawned(f)
}

func (d *Dispatcher) spawned(f func()) {
	defer d.wg.Done()
	f()
}

// startQueued is the one way a call's queued future starts: runQueued on a
// goroutine of its own.
func (d *Dispatcher) startQueued(id string, req Request, approved bool) {
	d.spawn(func() { d.runQueued(id, req, approved) })
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
	claimed, err := toRunning(d.ctx, alone(d.DB), id, time.Now(), "")
	if err != nil {
		d.Log.Error("claim future", "future", id, "err", err)
		return
	}
	if !claimed {
		return // cancelled before it started
	}
	a := NewAdmission(req, id)
	a.Approved = approved
	// Admitted again: the input may differ from the one admitted at
	// submission (references resolved), and so may the world (an e-stop
	// latched since, Hearth's own pid after a restart).
	v, _ := d.admit(d.ctx, a, admitOpts{claimed: true}) // execute journals the intent
	switch {
	case v.permit:
		d.reparkForPermit(a)
		return
	case v.refused != nil:
		env := ErrorEnvelope(req.Spec.Name(), v.refused)
		env.CommandID = a.CommandID
		if approved && v.governed && a.SideEffecting() {
			// The ledger says the operator approved it: its outcome (an
			// e-stop latched since, say) is journaled too, so that the
			// ledger's last word on the call is what happened.
			d.settleCall(a, env, true, &callLink{future: true})
			return
		}
		d.settleFuture(id, req.Route, env)
		return
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
		return toPermit(ctx, tx, a.FutureID, false)
	})
	if errors.Is(err, errNotRunning) {
		return // stopped or settled meanwhile; nothing was asked
	}
	if err != nil {
		d.settleFuture(a.FutureID, a.Route, ErrorEnvelope(a.Spec.Name(), err))
	}
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
		d.settleFuture(futureID, route, ErrorEnvelope(prim, primitive.Blocked("unknown_primitive", "primitive %s no longer exists", prim)))
		return fmt.Errorf("future %s: primitive %s no longer exists", futureID, prim)
	}
	errGone := fmt.Errorf("future %s is not waiting for a permit (cancelled or settled)", futureID)
	wctx := context.WithoutCancel(ctx) // an approval is carried out whole, whatever its request does
	err = d.DB.InTx(wctx, func(tx *sql.Tx) error {
		n, err := toQueued(wctx, inTx(tx), queueMove{id: futureID, from: "permit"})
		if err != nil {
			return err
		}
		if n == 0 {
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
	d.startQueued(futureID, Request{Route: route, Spec: spec, Input: json.RawMessage(input), Detach: true, CommandID: cmd.String}, true)
	return nil
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
	// StoppedBy says what stopped a cancelled call on purpose (the
	// e-stop, a shutdown); only the panel's list reads it.
	StoppedBy string `json:"-"`
	route     string
	class     string // of a scheduled future
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

// Route returns the conversation (route hash) the future belongs to.
func (f Future) Route() string { return f.route }

// ListAllFutures returns the futures of every conversation, newest first,
// without their results. It is for the operator's control panel, which
// sees all conversations; tools use ListFutures, scoped to their own.
func (d *Dispatcher) ListAllFutures(ctx context.Context, limit int) ([]Future, error) {
	return d.listFutures(ctx, "list all futures", "WHERE class IS NULL", limit)
}

// ListFutures returns route's futures, newest first, without their results.
// Scheduled futures (jobs) are listed by their owner, with their own view.
func (d *Dispatcher) ListFutures(ctx context.Context, route string, limit int) ([]Future, error) {
	return d.listFutures(ctx, "list futures", `WHERE route = ? AND class IS NULL`, route, limit)
}

// listFutures reads futures matching where (args, then the limit), newest
// first, without their results.
func (d *Dispatcher) listFutures(ctx context.Context, what, where string, args ...any) ([]Future, error) {
	rows, err := d.DB.R.QueryContext(ctx, `SELECT id, route, primitive, state, detached, outcome, created_at, finished_at, `+stoppedBySQL+`
		FROM futures `+where+` ORDER BY created_at DESC, rowid DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	out := []Future{}
	for rows.Next() {
		var f Future
		var det int
		var outcome sql.NullString
		var created int64
		var finished sql.NullInt64
		if err := rows.Scan(&f.ID, &f.route, &f.Primitive, &f.State, &det, &outcome, &created, &finished, &f.StoppedBy); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		f.Detached = det != 0
		f.Outcome = outcome.String
		f.CreatedAt = time.UnixMilli(created).UTC()
		if finished.Valid {
			t := time.UnixMilli(finished.Int64).UTC()
			f.FinishedAt = &t
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
