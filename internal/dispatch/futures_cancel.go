package dispatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// ErrRunning is returned by CancelQueued for a future that is already
// running: generic work may have side effects half done, so it is not
// interrupted.
var ErrRunning = errors.New("the future is already running and cannot be cancelled safely")

// CancelQueued cancels a future of route that has not started (queued,
// waiting on dependencies, or parked for a permit) atomically: the future
// either has still not started and becomes cancelled (its runner then never
// claims it), or it is left as it is. It returns the future as it is
// afterwards; for a running one it also returns ErrRunning, and for an
// unknown or foreign id ErrNoFuture.
func (d *Dispatcher) CancelQueued(ctx context.Context, route, id string) (Future, error) {
	f, err := d.GetFuture(ctx, route, id)
	if err != nil {
		return Future{}, err
	}
	if f.State == "queued" || f.State == StateWaiting || f.State == "permit" || f.State == StateHeld {
		wctx := context.WithoutCancel(ctx)
		cancelled := &Envelope{State: primitive.StateCancelled, Primitive: f.Primitive, FutureID: id,
			Error: &ErrorBody{Code: "cancelled", Message: "cancelled by task.cancel before it started"}}
		// A scheduled future's owner records its view in the same commit.
		var update func(context.Context, *sql.Tx) error
		if c := d.classes[f.class]; c != nil {
			if update, err = c.Runner.Ended(wctx, id, cancelled, nil); err != nil {
				return Future{}, fmt.Errorf("cancel future %s: %w", id, err)
			}
		}
		env, _ := json.Marshal(cancelled)
		var n int64
		err := d.DB.InTx(wctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(wctx, `UPDATE futures SET state = 'cancelled', result = ?, finished_at = ? WHERE id = ? AND route = ? AND state IN ('queued', 'waiting', 'permit', 'held')`,
				string(env), time.Now().UnixMilli(), id, route)
			if err != nil {
				return err
			}
			if n, _ = res.RowsAffected(); n > 0 && update != nil {
				return update(wctx, tx)
			}
			return nil
		})
		if err != nil {
			return Future{}, fmt.Errorf("cancel future %s: %w", id, err)
		}
		if n > 0 {
			// The operator is no longer asked. Withdrawn whatever state was
			// read before the update: the future may have parked meanwhile.
			d.Gov.CancelPermitsOf(ctx, id)
			d.wake(id)
			d.releaseDependents(id)
		}
		if f, err = d.GetFuture(ctx, route, id); err != nil {
			return Future{}, err
		}
	}
	if f.State == "running" {
		return f, ErrRunning
	}
	return f, nil
}

// ListFutures returns route's futures, newest first, without their results.
// Scheduled futures (jobs) are listed by their owner, with their own view.
func (d *Dispatcher) ListFutures(ctx context.Context, route string, limit int) ([]Future, error) {
	return d.listFutures(ctx, "list futures", `WHERE route = ? AND class IS NULL`, route, limit)
}

// listFutures reads futures matching where (args, then the limit), newest
// first, without their results.
func (d *Dispatcher) listFutures(ctx context.Context, what, where string, args ...any) ([]Future, error) {
	rows, err := d.DB.R.QueryContext(ctx, `SELECT id, route, primitive, state, detached, outcome, created_at, finished_at
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
		if err := rows.Scan(&f.ID, &f.route, &f.Primitive, &f.State, &det, &outcome, &created, &finished); err != nil {
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
