package govern

import (
	"context"
	"database/sql"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// Open UNKNOWN outcomes as the operator sees them, and their
// reconciliation (by the operator, or by the model's task.reconcile).

// Unknown is an open UNKNOWN outcome.
type Unknown struct {
	CommandID string    `json:"command_id"`
	Primitive string    `json:"primitive"`
	Route     string    `json:"route"`
	CreatedAt time.Time `json:"created_at"`
	// StartedAt is when the interrupted command began (its intent), zero
	// when no command was journaled under CommandID.
	StartedAt time.Time `json:"started_at,omitzero"`
	// Input is what the interrupted work was asked (the stored input of
	// its future or job), "" when Hearth kept none: a call that was
	// still within the inline budget keeps only its digest.
	Input string `json:"input,omitempty"`
}

// UnknownBlocking returns the open UNKNOWN that would refuse the call
// parked as futureID if it were released now (its conversation's gate,
// as Admit reads it), or nil: a card must not promise that an allowed
// call runs when this gate will refuse it.
func (g *Governor) UnknownBlocking(ctx context.Context, futureID string) (*Unknown, error) {
	f, ok, err := g.Futures.Future(ctx, futureID)
	if err != nil || !ok {
		return nil, err
	}
	if kind, ok := g.rows().KindOf(f.Primitive); ok && (kind == risk.KindRead || kind == risk.KindControl || kind == risk.KindSeveral) {
		return nil, nil // passes the gate (Admit)
	}
	open, err := g.openUnknown(ctx, f.Route, "")
	if err != nil || open == "" {
		return nil, err
	}
	us, err := g.Unknowns(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, u := range us {
		if u.CommandID == open {
			return &u, nil
		}
	}
	return nil, nil
}

// Unknowns lists open UNKNOWN outcomes (route "" for all).
func (g *Governor) Unknowns(ctx context.Context, route string) ([]Unknown, error) {
	q := `SELECT u.command_id, u.primitive, u.route, u.created_at, c.created_at FROM unknowns u
		LEFT JOIN commands c ON c.command_id = u.command_id WHERE u.reconciled_at IS NULL`
	var args []any
	if route != "" {
		q += ` AND u.route = ?`
		args = append(args, route)
	}
	rows, err := g.DB.R.QueryContext(ctx, q+` ORDER BY u.created_at`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Unknown
	for rows.Next() {
		var u Unknown
		var at int64
		var started sql.NullInt64
		if err := rows.Scan(&u.CommandID, &u.Primitive, &u.Route, &at, &started); err != nil {
			return nil, err
		}
		u.CreatedAt = time.UnixMilli(at).UTC()
		if started.Valid {
			u.StartedAt = time.UnixMilli(started.Int64).UTC()
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// What it was asked: the input of its future (a call that outlived
	// the inline budget), or of the job's future the UNKNOWN names.
	for i, u := range out {
		f, ok, err := g.Futures.FutureOfCommand(ctx, u.CommandID)
		if err == nil && !ok {
			f, ok, err = g.Futures.Future(ctx, u.CommandID)
		}
		if err != nil {
			return nil, err
		}
		if ok {
			out[i].Input = f.Input
		}
	}
	return out, nil
}

// reconcile closes an open UNKNOWN in scope (a route, by primitive.RouteMatch; any
// route when scope is "").
func (g *Governor) reconcile(ctx context.Context, scope, commandID, by, observed string) error {
	return g.DB.InTx(ctx, func(tx *sql.Tx) error {
		q := `UPDATE unknowns SET reconciled_at = ?, reconciled_by = ?, observed = ? WHERE command_id = ? AND reconciled_at IS NULL`
		args := []any{g.now().UnixMilli(), by, observed, commandID}
		if scope != "" {
			cond, arg := primitive.RouteMatch("route", scope)
			q += ` AND ` + cond
			args = append(args, arg)
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return primitive.Failed("not_found", "no open UNKNOWN outcome %s in this conversation", commandID)
		}
		// The observation is the model's or operator's text; only its
		// length is journaled, never its content.
		_, err = g.Ledger.AppendTx(ctx, tx, "reconcile", map[string]any{"command_id": commandID, "by": by, "observed_bytes": len(observed)})
		return err
	})
}

// Reconcile closes an UNKNOWN outcome on the operator's word.
func (o *Decisions) Reconcile(ctx context.Context, operator, commandID, observed string) error {
	if err := checkOperator(operator); err != nil {
		return err
	}
	return o.G.reconcile(ctx, "", commandID, "operator:"+operator, observed)
}
