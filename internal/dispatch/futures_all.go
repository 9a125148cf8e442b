package dispatch

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Route returns the conversation (route hash) the future belongs to.
func (f Future) Route() string { return f.route }

// ListAllFutures returns the futures of every conversation, newest first,
// without their results. It is for the operator's control panel, which
// sees all conversations; tools use ListFutures, scoped to their own.
func (d *Dispatcher) ListAllFutures(ctx context.Context, limit int) ([]Future, error) {
	rows, err := d.DB.R.QueryContext(ctx, `SELECT id, route, primitive, state, detached, outcome, created_at, finished_at
		FROM futures ORDER BY created_at DESC, rowid DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list all futures: %w", err)
	}
	defer rows.Close()
	out := []Future{}
	for rows.Next() {
		var f Future
		var det int
		var outcome sql.NullString
		var created int64
		var finished sql.NullInt64
		if err := rows.Scan(&f.ID, &f.route, &f.Primitive, &f.State, &det, &outcome, &created, &finished); err != nil {
			return nil, fmt.Errorf("list all futures: %w", err)
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
