package govern

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/ids"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// This file governs the runs of durable jobs. A job's submit was admitted
// when it was queued, but a run may start much later, after the operator
// tightened the policy, removed an allow-rule, latched the e-stop, or a
// call of the conversation ended UNKNOWN. So each run is admitted when it
// starts exactly as a fresh task.submit of that one job would be: e-stop,
// the policy mode in force, allow-rules, permits, the UNKNOWN gate. It is
// journaled like every call, under its own command id (a commands row the
// journal's recovery sees), and one that now needs a permit parks: the
// operator's decision (a Decision) releases or settles it.
//
// Two deliberate differences, each for a reason the caller stated when it
// submitted:
//   - a submit the operator approved covers its jobs' runs of exactly that
//     input (the operator saw each job), so a run does not ask again unless
//     something else refuses it;
//   - an UNKNOWN opened by the interruption of a job of the same submit
//     (on_interrupt "block") does not refuse its siblings: a job that needs
//     what another one changed says so with a dependency, and is blocked by
//     that dependency instead.

// JobRun is one run of a job as governance admits it.
type JobRun struct {
	// Admission is the run as a task.submit of the one job: its spec, the
	// job's conversation, the run's command id, the job id as its future,
	// and the input the operator would see (no environment values).
	Admission *callpath.Admission
	// Submit is the command id of the task.submit that queued the job.
	Submit string
	// Park records, inside the transaction that requests the permit, that
	// the job waits for permitID.
	Park func(ctx context.Context, tx *sql.Tx, permitID string) error
}

// IsJobRun reports whether a command is a job's run (its future is the
// job): the job queue's recovery settles those, by the job's on_interrupt.
func IsJobRun(futureID string) bool { return ids.Valid("job", futureID) }

// BeginJobRun admits a job's run and journals its intent. It returns nil
// to run, callpath.ErrPermitRequired with the permit's id when the run was
// parked for the operator (r.Park committed with the request), or a
// *primitive.Error (blocked) refusing the run, with nothing journaled.
func (g *Governor) BeginJobRun(ctx context.Context, r JobRun) (string, error) {
	a := r.Admission
	approved, err := g.runApproved(ctx, a, r.Submit)
	if err != nil {
		return "", err
	}
	a.Approved = approved
	err = g.admit(ctx, a, r.Submit)
	if errors.Is(err, callpath.ErrPermitRequired) {
		pid, perr := g.requestPermit(ctx, a, r.Park)
		if perr != nil {
			return "", primitive.Failed("journal_failed", "could not ask the operator for a permit for job %s, so it did not start: %v", a.FutureID, perr)
		}
		return pid, callpath.ErrPermitRequired
	}
	if err != nil {
		return "", err
	}
	return "", g.Begin(ctx, a)
}

// runApproved reports whether the operator approved this run (a permit of
// its own command id and input) or the submit that queued the job.
func (g *Governor) runApproved(ctx context.Context, a *callpath.Admission, submit string) (bool, error) {
	stmt, err := g.DB.ReadStmt(ctx, `SELECT EXISTS (SELECT 1 FROM permits WHERE command_id = ? AND input_sha256 = ? AND state = 'approved')
		OR EXISTS (SELECT 1 FROM permits WHERE command_id = ? AND ? != '' AND state = 'approved')`)
	if err != nil {
		return false, err
	}
	var n int
	if err := stmt.QueryRowContext(ctx, a.CommandID, a.Digest, submit, submit).Scan(&n); err != nil {
		return false, fmt.Errorf("look up the approval of job %s: %w", a.FutureID, err)
	}
	return n > 0, nil
}

// EndJobRunTx journals, inside tx (the one that records the job's end),
// the outcome of a run BeginJobRun journaled: the command's envelope and
// an outcome entry (data, plus the command id).
func (g *Governor) EndJobRunTx(ctx context.Context, tx *sql.Tx, commandID string, env *callpath.Envelope, data map[string]any) error {
	if err := g.storeOutcome(ctx, tx, commandID, env.State, env); err != nil {
		return err
	}
	data["command_id"] = commandID
	_, err := g.Ledger.AppendTx(ctx, tx, "outcome", data)
	return err
}

// InterruptedJobRunTx settles, inside the job queue's recovery
// transaction, the command of a run Hearth stopped under: unknown. Whether
// it closes the conversation's gate is the job's on_interrupt (the caller
// opens that UNKNOWN).
func (g *Governor) InterruptedJobRunTx(ctx context.Context, tx *sql.Tx, commandID, prim string) error {
	env := &callpath.Envelope{State: primitive.StateBlocked, Primitive: prim, CommandID: commandID,
		Error: &callpath.ErrorBody{Code: "unknown", Message: "Hearth stopped while this job run was running"}}
	return g.storeOutcome(ctx, tx, commandID, "unknown", env)
}

func (g *Governor) storeOutcome(ctx context.Context, tx *sql.Tx, commandID, state string, env *callpath.Envelope) error {
	stored := *env
	stored.Arrivals = nil
	b, err := json.Marshal(&stored)
	if err != nil {
		return fmt.Errorf("encode outcome of %s: %w", commandID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE commands SET state = ?, envelope = ?, finished_at = ? WHERE command_id = ? AND state = 'running'`,
		state, string(b), g.now().UnixMilli(), commandID); err != nil {
		return fmt.Errorf("record outcome of %s: %w", commandID, err)
	}
	return nil
}

// requestPermit records a permit request for a and, in the same
// transaction, park (when set): a crash leaves both or neither.
func (g *Governor) requestPermit(ctx context.Context, a *callpath.Admission, park func(ctx context.Context, tx *sql.Tx, permitID string) error) (string, error) {
	id := ids.New("pmt")
	now := g.now()
	exp := now.Add(g.PermitTTL)
	err := g.DB.InTx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO permits(id, route, primitive, input, input_sha256, future_id, command_id, state, created_at, expires_at)
			VALUES (?,?,?,?,?,?,?,'pending',?,?)`, id, a.Route, a.Spec.Name(), string(a.Input), a.Digest, a.FutureID, a.CommandID, now.UnixMilli(), exp.UnixMilli()); err != nil {
			return err
		}
		if _, err := g.Ledger.AppendTx(ctx, tx, "permit_requested", map[string]any{
			"permit_id": id, "primitive": a.Spec.Name(), "route": a.Route, "input_sha256": a.Digest,
			"command_id": a.CommandID, "future_id": a.FutureID, "expires_at": exp.UTC().Format(time.RFC3339),
		}); err != nil {
			return err
		}
		if park != nil {
			return park(ctx, tx, id)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("request permit: %w", err)
	}
	g.permitRequested()
	return id, nil
}
