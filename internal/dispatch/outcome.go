package dispatch

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// callLink joins the goroutine that runs a call to the one that may turn it
// into a durable future (Call's inline-budget race). Under mu, either the
// future is recorded first and the outcome then completes it, or the
// outcome is recorded first and the call is answered inline with no
// future: a future is never created for a call whose outcome is already
// journaled, which would leave it running until the next start settled it
// as unknown while a replay of its command id returned the real outcome.
type callLink struct {
	mu sync.Mutex
	// future is set when the call has a durable future row (id
	// Admission.FutureID) that its outcome must complete.
	future bool
	// recorded is set once the outcome was recorded (or deliberately not).
	recorded bool
}

// settleCall stores a call's outcome: the governor's journal entry (when
// journaled) and the completion of the call's future with its arrival
// (when it has one), in one transaction. A crash therefore leaves both or
// neither; with neither, the next start settles the command and the future
// alike as unknown.
func (d *Dispatcher) settleCall(a *Admission, env *Envelope, journaled bool, link *callLink) {
	link.mu.Lock()
	link.recorded = true
	future := link.future
	// A call a shutdown (a quit, a restart, an update) stopped is recorded
	// here like one the e-stop stopped: Hearth stopped it itself and
	// waits for this record before it closes the database (Stop), so its
	// end is known. Only what no record reaches (a crash) is settled as
	// unknown at the next start.
	if !journaled && !future {
		link.mu.Unlock()
		return
	}
	ctx := context.WithoutCancel(d.ctx)
	record := func() error {
		var payload []byte
		if future {
			// The arrival carries the future id; the journaled envelope
			// (what a replay returns) does not, as before a future existed.
			cp := *env
			payload = d.Arrivals.Payload(ctx, a.Route, a.FutureID, &cp)
		}
		now := time.Now()
		return d.DB.InTx(ctx, func(tx *sql.Tx) error {
			if journaled {
				if err := d.Gov.Finish(ctx, tx, a, env); err != nil {
					return fmt.Errorf("journal outcome: %w", err)
				}
				if d.seams.hooks.AfterFinish != nil {
					d.seams.hooks.AfterFinish(a)
				}
			}
			if future {
				_, err := settleTx(ctx, nil, tx, a.FutureID, a.Route, env.State, payload, now)
				return err
			}
			return nil
		})
	}
	err := record()
	link.mu.Unlock()
	if store.IsFull(err) {
		// The disk is full: the end is known but cannot be written yet.
		// It is written as soon as there is room again, without a restart
		// (never "still running" for good); only a shutdown before that
		// leaves it to the next start, as unknown.
		d.spawn(func() {
			if d.untilRoom(record) {
				d.wake(a.FutureID)
				d.releaseDependents(a.FutureID)
			}
		})
		return
	}
	if err != nil {
		d.Log.Error("record outcome", "command", a.CommandID, "future", a.FutureID, "err", err)
		if !future {
			return
		}
		if journaled {
			// The outcome is not journaled, so the command stays running
			// and the next start makes it unknown: the future says the same
			// now rather than a result no journal entry backs.
			d.settleFuture(a.FutureID, a.Route, &Envelope{State: primitive.StateBlocked, Primitive: a.Spec.Name(), CommandID: a.CommandID,
				Error: &ErrorBody{Code: "unknown", Message: "Hearth could not journal this call's outcome; treat it as unknown and re-read the state it may have changed."}})
			return
		}
	}
	d.wake(a.FutureID)
	d.releaseDependents(a.FutureID)
}

// settleTx records, inside tx, a non-terminal future's terminal state and
// queues its arrival; it reports whether it did (false: the future had
// already ended, cancelled meanwhile, and nothing was written). With db
// set, its writes go through db's prepared writer statements.
func settleTx(ctx context.Context, db *store.DB, tx *sql.Tx, id, route, envState string, payload []byte, now time.Time) (bool, error) {
	ended, err := toEnded(ctx, db, tx, id, envState, payload, now)
	if err != nil || !ended {
		return false, err
	}
	return true, enqueueArrival(ctx, db, tx, route, id, payload, now)
}

// txExec executes query in tx, through db's prepared writer statements
// when db is set.
func txExec(ctx context.Context, db *store.DB, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if db != nil {
		return db.TxExec(ctx, tx, query, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// Settle completes a non-terminal future with env (a denied or expired
// permit). internal/control calls it to carry out such a decision.
func (d *Dispatcher) Settle(futureID string, env *Envelope) {
	c, route, err := d.classOf(context.Background(), futureID)
	if err != nil {
		d.Log.Error("settle future", "future", futureID, "err", err)
		return
	}
	d.settle(c, futureID, route, env)
}

// settleFuture records a future's terminal envelope and queues its arrival in
// one transaction, spilling a large result to an artifact first.
func (d *Dispatcher) settleFuture(id, route string, env *Envelope) {
	ctx := context.WithoutCancel(d.ctx)
	record := func() error {
		payload := d.Arrivals.Payload(ctx, route, id, env)
		now := time.Now()
		return d.DB.InTx(ctx, func(tx *sql.Tx) error {
			_, err := settleTx(ctx, nil, tx, id, route, env.State, payload, now)
			return err
		})
	}
	err := record()
	if store.IsFull(err) {
		// Written when there is room again (see settleCall).
		d.spawn(func() {
			if d.untilRoom(record) {
				d.wake(id)
				d.releaseDependents(id)
			}
		})
		return
	}
	if err != nil {
		d.Log.Error("complete future", "future", id, "err", err)
	}
	d.wake(id)
	d.releaseDependents(id)
}

// Retrying a record the full disk refused: at first every roomRetryFirst,
// then less often, up to roomRetryMost apart.
const (
	roomRetryFirst = 250 * time.Millisecond
	roomRetryMost  = 5 * time.Second
)

// untilRoom retries record, which the full disk refused, until it goes
// through (true) or Hearth stops (false: the next start settles what it
// left as a crash would have). An error other than the full disk is
// logged and ends the retries.
func (d *Dispatcher) untilRoom(record func() error) bool {
	wait := roomRetryFirst
	for {
		t := time.NewTimer(wait)
		select {
		case <-d.ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		err := record()
		switch {
		case err == nil:
			return true
		case !store.IsFull(err):
			d.Log.Error("record an outcome once there was room again", "err", err)
			return false
		}
		wait = min(wait*2, roomRetryMost)
	}
}

func futureState(envState string) string {
	if envState == primitive.StateFailed {
		return "failed"
	}
	return envState
}

// settle ends future id with env: through its class's scheduler c when it
// is scheduled, as a call's future otherwise.
func (d *Dispatcher) settle(c *scheduler, id, route string, env *Envelope) {
	if c != nil {
		c.settle(id, route, env)
		return
	}
	d.settleFuture(id, route, env)
}
