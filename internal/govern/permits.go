package govern

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// Permits: a parked call's request, its expiry, and the decisions both
// leave for the caller to carry out on the parked work (Decision).

// RequestPermit implements callpath.Governor.
func (g *Governor) RequestPermit(ctx context.Context, a *callpath.Admission, park func(ctx context.Context, tx *sql.Tx, permitID string) error) (string, error) {
	return g.requestPermit(ctx, a, park)
}

// asksColumn is the permits.asks value of a call's items that ask: their
// JSON, or "" for none.
func asksColumn(asks []callpath.Ask) (string, error) {
	if len(asks) == 0 {
		return "", nil
	}
	b, err := json.Marshal(asks)
	if err != nil {
		return "", fmt.Errorf("encode the items that ask: %w", err)
	}
	return string(b), nil
}

// The lookups of a future's permits (permits_future serves them).
const (
	approvedOfFuture = `SELECT count(*) FROM permits WHERE future_id = ? AND state = 'approved'`
	pendingOfFuture  = `SELECT id FROM permits WHERE future_id = ? AND state = 'pending'`
	latestOfFuture   = `SELECT id, state FROM permits WHERE future_id = ? ORDER BY created_at DESC LIMIT 1`
)

// ApprovedFuture reports whether the operator approved a permit for
// futureID (dispatch asks at start-up for queued futures).
func (g *Governor) ApprovedFuture(ctx context.Context, futureID string) bool {
	var n int
	err := g.DB.R.QueryRowContext(ctx, approvedOfFuture, futureID).Scan(&n)
	return err == nil && n > 0
}

// CancelPermitsOf withdraws the pending permit of a future that was
// cancelled before the operator decided (task.cancel of a parked call).
func (g *Governor) CancelPermitsOf(ctx context.Context, futureID string) {
	err := g.DB.InTx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, pendingOfFuture, futureID)
		pids, err := store.Collect(rows, err, func(r *sql.Rows) (id string, err error) { return id, r.Scan(&id) })
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

// Decision is what a decision on a permit (the operator's approval or
// denial, or the permit's expiry) leaves for the engine holding the parked
// work to carry out once it has committed: release the work to run once
// (an approval), or settle it blocked with Refusal. Governance records
// decisions and returns them; it never reaches the engine itself.
type Decision struct {
	PermitID string
	// FutureID is the parked future (a durable job's attempt is one too).
	FutureID  string
	Primitive string
	// Refusal is nil for an approval; otherwise it is why the parked call
	// arrives blocked.
	Refusal *primitive.Error
}

// Approved reports whether the decision releases the parked work.
func (d Decision) Approved() bool { return d.Refusal == nil }

// Envelope is what a refused future settles with.
func (d Decision) Envelope() *callpath.Envelope {
	return callpath.ErrorEnvelope(d.Primitive, d.Refusal)
}

// Parked returns what the work still parked for a permit that is no longer
// pending waits for: the decision a previous process committed but was
// stopped before carrying out (an approval releases the work, a denial or
// expiry settles it blocked), or, for a future whose permit request was
// never recorded, a refusal saying so. The caller carries them out at
// start-up, once the engines can.
func (g *Governor) Parked(ctx context.Context) ([]Decision, error) {
	fs, err := g.Futures.ParkedFutures(ctx)
	if err != nil {
		return nil, fmt.Errorf("find parked work: %w", err)
	}
	type parked struct{ id, prim, permit, state string }
	var ps []parked
	for _, f := range fs {
		p := parked{id: f.ID, prim: f.Primitive}
		// The future's latest permit request, if it was recorded.
		err := g.DB.R.QueryRowContext(ctx, latestOfFuture, f.ID).Scan(&p.permit, &p.state)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("find parked work: %w", err)
		}
		ps = append(ps, p)
	}
	var out []Decision
	for _, p := range ps {
		d := Decision{PermitID: p.permit, FutureID: p.id, Primitive: p.prim}
		switch p.state {
		case "pending":
			continue
		case "approved":
		case "denied":
			d.Refusal = primitive.Blocked("permit_denied", "the operator denied the permit for this call")
		case "expired":
			d.Refusal = primitive.Blocked("permit_expired", "the operator did not decide on the permit for this call before it expired")
		default:
			d.Refusal = primitive.Blocked("permit_lost", "Hearth stopped before this call's permit request was recorded; nothing ran. Call again to ask the operator.")
		}
		out = append(out, d)
	}
	return out, nil
}

// PermitRequested is signalled (it never blocks the sender, so signals
// coalesce) each time a permit is requested: the caller's expiry loop then
// looks again for the earliest expiry (NextExpiry).
func (g *Governor) PermitRequested() <-chan struct{} { return g.requestedCh() }

func (g *Governor) requestedCh() chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.requested == nil {
		g.requested = make(chan struct{}, 1)
	}
	return g.requested
}

// permitRequested signals PermitRequested.
func (g *Governor) permitRequested() {
	select {
	case g.requestedCh() <- struct{}{}:
	default:
	}
}

// NextExpiry reports how long until the earliest pending permit expires
// (plus a small margin, so that it has by then), and false when none is
// pending.
func (g *Governor) NextExpiry(ctx context.Context) (time.Duration, bool, error) {
	var next sql.NullInt64
	if err := g.DB.R.QueryRowContext(ctx, `SELECT MIN(expires_at) FROM permits WHERE state = 'pending'`).Scan(&next); err != nil {
		return 0, false, fmt.Errorf("find the next permit expiry: %w", err)
	}
	if !next.Valid {
		return 0, false, nil
	}
	return max(time.UnixMilli(next.Int64).Sub(g.now()), 0) + 10*time.Millisecond, true, nil
}

// ExpirePermits expires every pending permit past its expiry and returns
// the expiries for the caller to carry out: each parked call arrives as
// blocked.
func (g *Governor) ExpirePermits(ctx context.Context) ([]Decision, error) {
	now := g.now()
	type p struct{ id, fut, prim string }
	rows, err := g.DB.R.QueryContext(ctx, `SELECT id, future_id, primitive FROM permits WHERE state = 'pending' AND expires_at <= ?`, now.UnixMilli())
	ps, err := store.Collect(rows, err, func(r *sql.Rows) (x p, err error) { return x, r.Scan(&x.id, &x.fut, &x.prim) })
	if err != nil {
		return nil, err
	}
	var out []Decision
	for _, x := range ps {
		changed, err := g.decide(ctx, x.id, "expired", "", "permit_expired", nil)
		if err != nil {
			return out, err
		}
		if changed {
			out = append(out, Decision{PermitID: x.id, FutureID: x.fut, Primitive: x.prim,
				Refusal: primitive.Blocked("permit_expired", "the operator did not decide on permit %s before it expired", x.id)})
		}
	}
	return out, nil
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
