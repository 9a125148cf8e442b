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

// The journal: intent before a side effect runs, outcome in the
// transaction that completes it, UNKNOWN outcomes, and the recovery of
// commands a previous process left running.

// Begin implements callpath.Governor: command row and intent entry commit
// together, before the primitive runs. The e-stop latch is read again in
// this write transaction: Latch writes through the same single writer, so
// a call either begins before the latch (and its work context is then
// cancelled by the e-stop) or is refused here — an e-stop that lands
// between Admit and Begin cannot let a call run unstopped.
func (g *Governor) Begin(ctx context.Context, a *callpath.Admission) error {
	err := g.DB.InTx(context.WithoutCancel(ctx), func(tx *sql.Tx) error { return g.BeginTx(ctx, tx, a) })
	if err != nil {
		var pe *primitive.Error
		if errors.As(err, &pe) {
			return pe
		}
		if store.IsFull(err) {
			return primitive.DiskFull(err)
		}
		return primitive.Failed("journal_failed", "could not journal the intent, so %s did not run: %v", a.Spec.Name(), err)
	}
	return nil
}

// BeginTx is Begin inside tx, a write transaction of the caller's (the
// dispatcher's claim of scheduled futures journals each admitted attempt
// in the commit that claims it). A refusal (the e-stop is latched, the
// command id is taken) is a *primitive.Error and writes nothing, so the
// caller may go on with tx; any other error is the database's.
func (g *Governor) BeginTx(ctx context.Context, tx *sql.Tx, a *callpath.Admission) error {
	// A compound call (run.scatter) is admitted as a read: under the
	// e-stop it still answers, with every call it submits refused.
	if a.Spec.Risk != primitive.RiskControl && !a.Spec.Compound {
		var st EStopState
		if _, err := getSetting(ctx, prepared{g.DB, tx}, keyEStop, &st); err != nil {
			return err
		}
		if st.Latched {
			return primitive.Blocked("estop", "emergency stop is latched (%s); %s refused. Only the operator can reset it.", st.Reason, a.Spec.Name())
		}
	}
	res, err := g.DB.TxExec(ctx, tx, `INSERT INTO commands(command_id, route, primitive, input_sha256, future_id, state, created_at)
		VALUES (?,?,?,?,?,'running',?) ON CONFLICT(command_id) DO NOTHING`, a.CommandID, a.Route, a.Spec.Name(), a.Digest, a.FutureID, g.now().UnixMilli())
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return primitive.Conflict("command_id_reused", "command id %s is already in use", a.CommandID)
	}
	intent := map[string]any{
		"command_id": a.CommandID, "primitive": a.Spec.Name(), "risk": string(a.Spec.Risk),
		"route": a.Route, "input_sha256": a.Digest, "future_id": a.FutureID, "approved": a.Approved,
	}
	if a.Flagged {
		// A write that makes a program start by itself, run because the
		// mode trusts it: the Status page lists these (Flagged).
		intent["flagged"] = map[string]any{"case": a.Case, "path": a.Subject, "said": a.Said}
		if _, err := g.DB.TxExec(ctx, tx, `INSERT INTO flagged_writes(command_id, primitive, path, said, at) VALUES (?,?,?,?,?)`,
			a.CommandID, a.Spec.Name(), a.Subject, a.Said, g.now().UnixMilli()); err != nil {
			return err
		}
	}
	_, err = g.Ledger.AppendTx(ctx, tx, "intent", intent)
	return err
}

// outcomeKind maps an envelope to the ledger's outcome vocabulary.
func outcomeKind(a *callpath.Admission, env *callpath.Envelope) string {
	switch {
	case env.State == primitive.StateCompleted, env.State == primitive.StatePartial:
		// A partial call ran every item; its answer says which failed.
		return "receipt"
	case env.State == primitive.StateCancelled:
		// Hearth stopped it itself, on purpose (the e-stop, task.cancel,
		// the e-stop's hold of the jobs, a shutdown or an update): its end
		// is known, so it is recorded as stopped, by what (stopped_by), and
		// closes no gate. UNKNOWN is for what Hearth cannot know (Recover:
		// a crash, a lost power). A started job attempt a shutdown stops
		// is settled by its interruption rule at the next start instead
		// (dispatch records nothing for it).
		return "stopped"
	case env.Error != nil && env.Error.Code == "unknown":
		return "unknown"
	}
	return "tool_error"
}

// Finish implements callpath.Governor: the command's stored envelope (what
// a replay returns), its outcome entry and, for an unknown outcome, the
// closed gate are written inside tx, the dispatcher's transaction that also
// completes the call's future.
func (g *Governor) Finish(ctx context.Context, tx *sql.Tx, a *callpath.Admission, env *callpath.Envelope) error {
	stored := *env
	stored.Arrivals = nil
	b, err := json.Marshal(&stored)
	if err != nil {
		return fmt.Errorf("encode outcome of %s: %w", a.CommandID, err)
	}
	kind := outcomeKind(a, env)
	if _, err := g.DB.TxExec(ctx, tx, `UPDATE commands SET state = ?, envelope = ?, finished_at = ? WHERE command_id = ?`,
		env.State, string(b), g.now().UnixMilli(), a.CommandID); err != nil {
		return fmt.Errorf("record outcome of %s: %w", a.CommandID, err)
	}
	data := map[string]any{"command_id": a.CommandID, "outcome": kind, "state": env.State}
	if env.Error != nil {
		data["error_code"] = env.Error.Code
		if by, ok := env.Error.Details[callpath.StoppedByKey].(string); ok && env.State == primitive.StateCancelled {
			data["stopped_by"] = by
		}
	}
	if kind == "unknown" {
		if err := openUnknown(ctx, tx, a.CommandID, a.Route, a.Spec.Name(), g.now()); err != nil {
			return fmt.Errorf("open unknown %s: %w", a.CommandID, err)
		}
	}
	_, err = g.Ledger.AppendTx(ctx, tx, "outcome", data)
	return err
}

// InFlight journals, inside tx (the one that records the call's running
// future), that a command outlived the inline budget and is still running
// (outcome in_flight); its final outcome follows.
func (g *Governor) InFlight(ctx context.Context, tx *sql.Tx, a *callpath.Admission) error {
	_, err := g.Ledger.AppendTx(ctx, tx, "outcome", map[string]any{"command_id": a.CommandID, "outcome": "in_flight", "future_id": a.FutureID})
	return err
}

func openUnknown(ctx context.Context, tx *sql.Tx, cmd, route, prim string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO unknowns(command_id, route, primitive, created_at) VALUES (?,?,?,?) ON CONFLICT(command_id) DO NOTHING`,
		cmd, route, prim, at.UnixMilli())
	return err
}

// Recover settles what a previous process left: every command journaled as
// running gets an `unknown` outcome and closes its conversation's gate.
// The command of a scheduled future's attempt follows the future's
// interruption rule instead (the dispatcher's recovery settles the future
// itself): under "requeue" it is unknown without closing the gate (the
// future runs again); under "block" the gate is closed naming the future,
// which task.reconcile settles.
func (g *Governor) Recover(ctx context.Context) error {
	type cmd struct {
		id, route, prim, fut, class, rule string
		attempts                          int
	}
	rows, err := g.DB.R.QueryContext(ctx, `SELECT command_id, route, primitive, future_id FROM commands WHERE state = 'running'`)
	cmds, err := store.Collect(rows, err, func(r *sql.Rows) (c cmd, err error) {
		return c, r.Scan(&c.id, &c.route, &c.prim, &c.fut)
	})
	if err != nil {
		return fmt.Errorf("find interrupted commands: %w", err)
	}
	// A scheduled future's attempt follows the future's rule: the engine
	// says which futures are scheduled (they have a class).
	for i, c := range cmds {
		f, ok, err := g.Futures.Future(ctx, c.fut)
		if err != nil {
			return fmt.Errorf("find interrupted commands: %w", err)
		}
		if ok && f.Class != "" {
			cmds[i].class, cmds[i].rule, cmds[i].attempts = f.Class, f.OnInterrupt, f.Attempts
		}
	}
	for _, c := range cmds {
		err := g.DB.InTx(ctx, func(tx *sql.Tx) error {
			msg := "Hearth stopped while this command was running; its outcome is unknown"
			if c.class != "" {
				msg = "Hearth stopped while this attempt was running; its outcome is unknown"
			}
			env := callpath.Envelope{State: primitive.StateBlocked, Primitive: c.prim, CommandID: c.id,
				Error: &callpath.ErrorBody{Code: "unknown", Message: msg}}
			b, _ := json.Marshal(&env)
			if _, err := tx.ExecContext(ctx, `UPDATE commands SET state = 'unknown', envelope = ?, finished_at = ? WHERE command_id = ?`, string(b), g.now().UnixMilli(), c.id); err != nil {
				return err
			}
			data := map[string]any{"command_id": c.id, "outcome": "unknown", "state": "blocked", "interrupted": true}
			gate := c.id
			if c.class != "" {
				// The ledger names the work as task.* does: the job.
				data[c.class+"_id"], data["route"], data["primitive"], data["attempt"] = c.fut, c.route, c.prim, c.attempts
				data["action"], gate = "blocked", c.fut
				if c.rule == "requeue" {
					data["action"], gate = "requeued", ""
				}
			}
			if gate != "" {
				if err := openUnknown(ctx, tx, gate, c.route, c.prim, g.now()); err != nil {
					return err
				}
			}
			_, err := g.Ledger.AppendTx(ctx, tx, "outcome", data)
			return err
		})
		if err != nil {
			return fmt.Errorf("settle interrupted command %s: %w", c.id, err)
		}
	}
	return nil
}
