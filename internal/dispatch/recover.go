package dispatch

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// neverStarted reports whether a future the previous process left running
// provably never started its primitive: it is side-effecting, so under
// governance it runs only after Begin journaled its intent, and its command
// has no journaled intent naming it. Such a future was claimed (or outlived
// the inline budget) and the process died before Begin committed. For a
// read primitive (never journaled), or a future without a command id,
// nothing proves it, and the future is interrupted work: unknown.
func (d *Dispatcher) neverStarted(ctx context.Context, prim, cmd, id string) (bool, error) {
	if cmd == "" {
		return false, nil
	}
	spec, ok := d.Registry.Lookup(prim)
	if !ok || !journaled(spec) {
		return false, nil
	}
	began, err := d.Gov.Journaled(ctx, cmd, id)
	return !began, err
}

// recover settles the futures a previous process left behind, calls'
// and scheduled ones alike, in one pass over what it left running:
//   - a future whose primitive provably never started (neverStarted) is
//     queued again, not counted as an attempt, and runs now, admitted
//     afresh like every queued future;
//   - an interrupted scheduled future under the rule "requeue" is queued
//     again with the interruption counted;
//   - every other interrupted future (a call's, or one under "block")
//     ends blocked with outcome unknown, never replayed, which blocks its
//     dependents.
//
// Then scheduled futures held for an UNKNOWN are queued again (admitted
// afresh, held.go), so that a reconcile whose release a crash cut short
// holds nothing for good; queued calls start; waiting futures whose
// dependencies all settled are released. Queued scheduled futures need
// nothing: their scheduler finds them.
func (d *Dispatcher) recover(ctx context.Context) error {
	if err := d.reofferAfterRestart(ctx); err != nil {
		return err
	}
	type fut struct {
		id, route, prim, cmd, rule string
		class                      sql.NullString
		attempts                   int
	}
	rows, err := d.DB.R.QueryContext(ctx, `SELECT id, route, primitive, COALESCE(command_id, ''), class, COALESCE(on_interrupt, ''), attempts
		FROM futures WHERE state = 'running' ORDER BY rowid`)
	running, err := store.Collect(rows, err, func(r *sql.Rows) (f fut, err error) {
		return f, r.Scan(&f.id, &f.route, &f.prim, &f.cmd, &f.class, &f.rule, &f.attempts)
	})
	if err != nil {
		return fmt.Errorf("find interrupted futures: %w", err)
	}
	for _, f := range running {
		c := d.classes[f.class.String]
		if f.class.Valid && c == nil {
			continue // a class this dispatcher does not run
		}
		never, err := d.neverStarted(ctx, f.prim, f.cmd, f.id)
		if err != nil {
			return fmt.Errorf("recover future %s: %w", f.id, err)
		}
		switch {
		case never:
			// A call's future has no attempts to uncount (0 stays 0).
			_, err = toQueued(ctx, alone(d.DB), queueMove{id: f.id, from: "running", uncount: true})
			if err == nil {
				d.Log.Info("requeued a future that never started", "future", f.id, "command", f.cmd)
			}
		case c != nil && f.rule == OnInterruptRequeue:
			err = d.DB.InTx(ctx, func(tx *sql.Tx) error {
				if _, err := toQueued(ctx, inTx(tx), queueMove{id: f.id, from: "running", interrupted: true}); err != nil {
					return err
				}
				return c.Runner.Requeued(ctx, tx, f.id, f.attempts)
			})
		default:
			env := &Envelope{State: primitive.StateBlocked, Primitive: f.prim, Error: &ErrorBody{Code: "unknown",
				Message: "Hearth stopped while this call was running; it was not replayed. Re-read the state it may have changed before retrying."}}
			interruptions := 0
			if c != nil {
				env.CommandID, interruptions = f.cmd, 1
				env.Error.Message = fmt.Sprintf("Hearth stopped while attempt %d was running; not replayed (on_interrupt: block). Re-read what it may have changed before resubmitting.", f.attempts)
			}
			if err = markUnknown(ctx, alone(d.DB), f.id, interruptions); err != nil {
				break
			}
			d.settle(c, f.id, f.route, env)
		}
		if err != nil {
			return fmt.Errorf("recover future %s: %w", f.id, err)
		}
	}
	for _, c := range d.classes {
		if _, err := toQueued(ctx, alone(d.DB), queueMove{heldOf: c.Name}); err != nil {
			return fmt.Errorf("release %s futures held for an UNKNOWN: %w", c.Name, err)
		}
	}
	rows, err = d.DB.R.QueryContext(ctx, `SELECT id, route, primitive, input, COALESCE(command_id, '') FROM futures WHERE state = 'queued' AND class IS NULL ORDER BY created_at`)
	if err != nil {
		return fmt.Errorf("find queued futures: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, route, prim, input, cmd string
		if err := rows.Scan(&id, &route, &prim, &input, &cmd); err != nil {
			return err
		}
		spec, ok := d.Registry.Lookup(prim)
		if !ok {
			d.settleFuture(id, route, ErrorEnvelope(prim, primitive.Blocked("unknown_primitive", "primitive %s no longer exists", prim)))
			continue
		}
		req := Request{Route: route, Spec: spec, Input: json.RawMessage(input), Detach: true, CommandID: cmd}
		d.startQueued(id, req, d.Gov.ApprovedFuture(ctx, id))
	}
	d.recoverWaiting()
	return rows.Err()
}

// reofferAfterRestart forgets, for every conversation, which batch of
// arrivals was offered last: the answer that carried it may have died with
// the previous process (a crash after the offer was recorded but before
// the response was written), and the next distinct request would then
// acknowledge arrivals its client never saw. So after a start the last
// batch is offered again: delivery stays at-least-once, a client may see
// an arrival twice (the same future_id and seq) but never miss one.
func (d *Dispatcher) reofferAfterRestart(ctx context.Context) error {
	if _, err := d.DB.W.ExecContext(ctx, `UPDATE cursors SET offered_seq = acked_seq, offered_fp = '' WHERE offered_seq <> acked_seq`); err != nil {
		return fmt.Errorf("re-offer the arrivals of the last answers: %w", err)
	}
	return nil
}
