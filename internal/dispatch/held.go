package dispatch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// Scheduled futures held for an UNKNOWN. An attempt that comes due while
// its conversation has an open UNKNOWN outcome (callpath.CodeUnknownOpen)
// does not end blocked for good: it waits, held, not counted as an
// attempt, until the UNKNOWN is reconciled. The reconcile then releases
// it (ReleaseHeld: queued again, admitted afresh, so it is held again if
// another UNKNOWN is still open) or, when the reconcile says so, cancels
// it (CancelHeld). A start releases every held future, so a crash between
// a reconcile's commit and its release leaves nothing held for good.

// StateHeld is the state of a scheduled future held for an UNKNOWN.
const StateHeld = "held"

// heldFor returns the command id of the UNKNOWN err refuses an attempt
// for ("" when err is another refusal).
func heldFor(err error) string {
	var pe *primitive.Error
	if !errors.As(err, &pe) || pe.Code != callpath.CodeUnknownOpen {
		return ""
	}
	id, _ := pe.Details["command_id"].(string)
	if id == "" {
		id = "?"
	}
	return id
}

// hold moves running attempt a to held for UNKNOWN unknown: the attempt
// is not counted, and the runner records why, in one commit. It reports
// false when that could not be recorded (the caller then settles the
// attempt as refused).
func (c *scheduler) hold(a *Admission, unknown string) bool {
	d := c.d
	ctx := context.WithoutCancel(d.ctx)
	err := d.DB.InTx(ctx, func(tx *sql.Tx) error {
		if err := toHeld(ctx, tx, a.FutureID); err != nil {
			return err
		}
		return c.Runner.Held(ctx, tx, a.FutureID, unknown)
	})
	switch {
	case errors.Is(err, errNotRunning):
		// Settled elsewhere meanwhile (cancelled): nothing to hold.
	case err != nil:
		d.Log.Error("hold a future for an UNKNOWN", "future", a.FutureID, "unknown", unknown, "err", err)
		return false
	}
	d.wake(a.FutureID)
	return true
}

// ReleaseHeld queues again every scheduled future held for an UNKNOWN
// (after a reconcile) and wakes their classes: each is admitted afresh
// when claimed, and held again while an UNKNOWN still refuses it. It
// returns how many it released.
func (d *Dispatcher) ReleaseHeld(ctx context.Context) (int, error) {
	total := 0
	wctx := context.WithoutCancel(ctx)
	for _, c := range d.classes {
		var n int64
		err := d.DB.InTx(wctx, func(tx *sql.Tx) error {
			var err error
			n, err = toQueued(wctx, inTx(tx), queueMove{heldOf: c.Name})
			return err
		})
		if err != nil {
			return total, fmt.Errorf("release futures held for an UNKNOWN: %w", err)
		}
		if n > 0 {
			total += int(n)
			c.wake()
		}
	}
	return total, nil
}

// CancelHeld cancels the scheduled futures of route held for an UNKNOWN
// (a reconcile that says the work must not run after all), each settled
// cancelled with its arrival and its dependents blocked, and returns
// their ids.
func (d *Dispatcher) CancelHeld(ctx context.Context, route, why string) ([]string, error) {
	rows, err := d.DB.R.QueryContext(ctx, `SELECT id, primitive, class FROM futures WHERE state = 'held' AND route = ? ORDER BY rowid`, route)
	type held struct{ id, prim, class string }
	hs, err := store.Collect(rows, err, func(r *sql.Rows) (h held, err error) { return h, r.Scan(&h.id, &h.prim, &h.class) })
	if err != nil {
		return nil, fmt.Errorf("find futures held for an UNKNOWN: %w", err)
	}
	var ids []string
	for _, h := range hs {
		c := d.classes[h.class]
		if c == nil {
			continue
		}
		c.settle(h.id, route, &Envelope{State: primitive.StateCancelled, Primitive: h.prim, Error: &ErrorBody{Code: "cancelled", Message: why}})
		ids = append(ids, h.id)
	}
	return ids, nil
}
