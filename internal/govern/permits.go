package govern

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// Permits: a parked call's request, its expiry, and the operator's
// decision settling it.

// RequestPermit implements callpath.Governor.
func (g *Governor) RequestPermit(ctx context.Context, a *callpath.Admission) (string, error) {
	return g.requestPermit(ctx, a)
}

// ApprovedFuture reports whether the operator approved a permit for
// futureID (dispatch asks at start-up for queued futures).
func (g *Governor) ApprovedFuture(ctx context.Context, futureID string) bool {
	var n int
	err := g.DB.R.QueryRowContext(ctx, `SELECT count(*) FROM permits WHERE future_id = ? AND state = 'approved'`, futureID).Scan(&n)
	return err == nil && n > 0
}

// CancelPermitsOf withdraws the pending permit of a future that was
// cancelled before the operator decided (task.cancel of a parked call).
func (g *Governor) CancelPermitsOf(ctx context.Context, futureID string) {
	err := g.DB.InTx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM permits WHERE future_id = ? AND state = 'pending'`, futureID)
		pids, err := collect(rows, err, func(r *sql.Rows) (id string, err error) { return id, r.Scan(&id) })
		if err != nil {
			return err
		}
		for _, id := range pids {
			if _, err := tx.ExecContext(ctx, `UPDATE permits SET state = 'cancelled', decided_at = ? WHERE id = ?`, g.now().UnixMilli(), id); err != nil {
				return err
			}
			if _, err := g.Ledger.AppendTx(ctx, tx, "permit_cancelled", map[string]any{"permit_id": id, "future_id": futureID}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		g.Log.Error("withdraw permits", "future", futureID, "err", err)
	}
}

// SettleParked settles futures a previous process left parked without a
// pending permit: a permit denied or expired just before a crash (the call
// arrives as blocked), or a parking interrupted before its permit was
// recorded. It runs once the dispatcher has started.
func (g *Governor) SettleParked(ctx context.Context) error {
	rows, err := g.DB.R.QueryContext(ctx, `SELECT f.id, f.primitive, COALESCE((SELECT p.state FROM permits p WHERE p.future_id = f.id ORDER BY p.created_at DESC LIMIT 1), '')
		FROM futures f WHERE f.state = 'permit'`)
	type parked struct{ id, prim, permit string }
	ps, err := collect(rows, err, func(r *sql.Rows) (p parked, err error) { return p, r.Scan(&p.id, &p.prim, &p.permit) })
	if err != nil {
		return fmt.Errorf("find parked futures: %w", err)
	}
	for _, p := range ps {
		var why *primitive.Error
		switch p.permit {
		case "pending":
			continue
		case "denied":
			why = primitive.Blocked("permit_denied", "the operator denied the permit for this call")
		case "expired":
			why = primitive.Blocked("permit_expired", "the operator did not decide on the permit for this call before it expired")
		default:
			why = primitive.Blocked("permit_lost", "Hearth stopped before this call's permit request was recorded; nothing ran. Call again to ask the operator.")
		}
		g.Futures.Settle(p.id, callpath.ErrorEnvelope(p.prim, why))
	}
	return nil
}

// armExpiry makes sure a timer fires by at to expire pending permits: one
// timer for the earliest expiry, no polling.
func (g *Governor) armExpiry(at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := max(at.Sub(g.now()), 0) + 10*time.Millisecond
	if g.timer != nil {
		g.timer.Stop()
	}
	g.timer = time.AfterFunc(d, func() {
		if err := g.ExpirePermits(context.Background()); err != nil {
			g.Log.Error("expire permits", "err", err)
		}
	})
}

// Stop stops the expiry timer.
func (g *Governor) Stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timer != nil {
		g.timer.Stop()
	}
}

// ExpirePermits expires every pending permit past its expiry: the parked
// call arrives as blocked. It re-arms the timer for the next one.
func (g *Governor) ExpirePermits(ctx context.Context) error {
	now := g.now()
	type p struct{ id, fut, prim string }
	rows, err := g.DB.R.QueryContext(ctx, `SELECT id, future_id, primitive FROM permits WHERE state = 'pending' AND expires_at <= ?`, now.UnixMilli())
	ps, err := collect(rows, err, func(r *sql.Rows) (x p, err error) { return x, r.Scan(&x.id, &x.fut, &x.prim) })
	if err != nil {
		return err
	}
	for _, x := range ps {
		why := primitive.Blocked("permit_expired", "the operator did not decide on permit %s before it expired", x.id)
		changed, err := g.decide(ctx, x.id, "expired", "", "permit_expired", nil)
		if err != nil {
			return err
		}
		if changed && g.Futures != nil {
			g.Futures.Settle(x.fut, callpath.ErrorEnvelope(x.prim, why))
		}
	}
	return g.armNextExpiry(ctx)
}

// armNextExpiry arms the expiry timer for the earliest pending permit.
func (g *Governor) armNextExpiry(ctx context.Context) error {
	var next sql.NullInt64
	if err := g.DB.R.QueryRowContext(ctx, `SELECT MIN(expires_at) FROM permits WHERE state = 'pending'`).Scan(&next); err != nil {
		return fmt.Errorf("find the next permit expiry: %w", err)
	}
	if next.Valid {
		g.armExpiry(time.UnixMilli(next.Int64))
	}
	return nil
}

// decide moves a pending permit to state and journals kind, atomically.
// It reports false when the permit was no longer pending.
func (g *Governor) decide(ctx context.Context, permitID, state, by, kind string, extra func(tx *sql.Tx) error) (bool, error) {
	changed := false
	err := g.DB.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE permits SET state = ?, decided_at = ?, decided_by = ? WHERE id = ? AND state = 'pending'`,
			state, g.now().UnixMilli(), by, permitID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		changed = true
		data := map[string]any{"permit_id": permitID}
		if by != "" {
			data["operator"] = by
		}
		if _, err := g.Ledger.AppendTx(ctx, tx, kind, data); err != nil {
			return err
		}
		if extra != nil {
			return extra(tx)
		}
		return nil
	})
	return changed, err
}
