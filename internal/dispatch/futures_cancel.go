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
		var done bool
		err := d.DB.InTx(wctx, func(tx *sql.Tx) error {
			var err error
			if done, err = toCancelled(wctx, tx, id, route, env, time.Now()); err != nil {
				return err
			}
			if done && update != nil {
				return update(wctx, tx)
			}
			return nil
		})
		if err != nil {
			return Future{}, fmt.Errorf("cancel future %s: %w", id, err)
		}
		if done {
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
