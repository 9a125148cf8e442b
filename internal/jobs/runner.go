package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/machine"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// submitPrimitive names jobs in arrival envelopes, permits and the ledger:
// a run is admitted as a task.submit of that one job.
const submitPrimitive = "task.submit"

// rootCauseKey carries, from DependencyBlocked to Ended, the failure at the
// root of a dependency block; it is not part of the arrival.
const rootCauseKey = "hearth_root_cause"

// runner is the job class's dispatch.ClassRunner.
type runner struct{ q *Queue }

// Run executes one attempt: the stored command, arguments, working
// directory and environment, bounded like machine.exec. A time-out or a
// non-zero exit fails the job (with its result).
func (r runner) Run(ctx context.Context, call *primitive.Call) (any, error) {
	j, err := r.q.read(ctx, call.FutureID)
	if err != nil {
		return nil, primitive.Failed("internal", "read job %s: %v", call.FutureID, err)
	}
	r.q.runRows.Store(call.FutureID, j)
	in := machine.ExecInput{Command: j.Command, Args: j.Args, Cwd: j.Cwd, Env: j.env, TimeoutMS: j.TimeoutMS}
	res, err := r.q.Exec(ctx, call, in)
	switch {
	case err != nil:
		return nil, err
	case res.TimedOut:
		return res, primitive.Failed("timed_out", "timed out after %d ms; its process tree was killed", j.TimeoutMS)
	case res.ExitCode != 0:
		return res, primitive.Failed("exit_code", "exited with code %d", res.ExitCode)
	}
	return res, nil
}

// Ended sets env.Result to the job as it is once it ended as env says, and
// returns the update of its row.
func (r runner) Ended(ctx context.Context, id string, env *dispatch.Envelope, res any) (func(context.Context, *sql.Tx) error, error) {
	// The row the attempt's Run read is the row as it is now: nothing else
	// writes a running job's row (its claim was before Run; its end is
	// this). A future that ended without running is read.
	var j *jobRow
	if v, ok := r.q.runRows.LoadAndDelete(id); ok {
		j = v.(*jobRow)
	} else {
		var err error
		if j, err = r.q.read(ctx, id); err != nil {
			return nil, fmt.Errorf("read job %s: %w", id, err)
		}
	}
	now := time.Now()
	j.State, j.Reason, j.FinishedAt = env.State, "", &now
	rootCause := ""
	if env.Error != nil {
		j.Reason = env.Error.Message
		if rc, ok := env.Error.Details[rootCauseKey].(string); ok {
			rootCause = rc
			delete(env.Error.Details, rootCauseKey)
			if len(env.Error.Details) == 0 {
				env.Error.Details = nil
			}
		}
		if env.Error.Code == OutcomeUnknown {
			j.Outcome = OutcomeUnknown
		}
		if by, ok := env.Error.Details[callpath.StoppedByKey].(string); ok && env.State == StateCancelled {
			j.StoppedBy = by
		}
	}
	var exit, result any
	if er, ok := res.(*machine.ExecResult); ok && er != nil {
		j.ExitCode = &er.ExitCode
		j.Result, _ = json.Marshal(er)
		exit, result = er.ExitCode, string(j.Result)
	}
	env.Primitive = submitPrimitive
	env.Result = j.view()
	return func(ctx context.Context, tx *sql.Tx) error {
		if _, err := r.q.DB.TxExec(ctx, tx, `UPDATE jobs SET exit_code = ?, result = ?, reason = ?, root_cause = ? WHERE id = ?`,
			exit, result, j.Reason, rootCause, id); err != nil {
			return fmt.Errorf("record job %s: %w", id, err)
		}
		return nil
	}, nil
}

// Parked records why job id waits and queues the arrival that names the
// permit.
func (r runner) Parked(ctx context.Context, tx *sql.Tx, id, permitID string) error {
	reason := fmt.Sprintf("waiting for operator permit %s: the policy in force when it came due requires one", permitID)
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET reason = ? WHERE id = ?`, reason, id); err != nil {
		return fmt.Errorf("park job %s: %w", id, err)
	}
	j, err := r.q.row(ctx, tx, id)
	if err != nil {
		return fmt.Errorf("read parked job %s: %w", id, err)
	}
	return queueArrival(ctx, tx, j, "", permitID, time.Now())
}

// releasedReason is a job's reason once the operator approved the permit
// it waited for: queued, or running, under that approval.
const releasedReason = "approved by the operator after it waited for a permit"

// Released records that the operator approved job id's permit.
func (r runner) Released(ctx context.Context, tx *sql.Tx, id string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET reason = ? WHERE id = ?`, releasedReason, id); err != nil {
		return fmt.Errorf("release job %s: %w", id, err)
	}
	return nil
}

// Held records why job id waits: it came due while its conversation had
// an open UNKNOWN outcome, and runs (or is cancelled) once that is
// reconciled.
func (r runner) Held(ctx context.Context, tx *sql.Tx, id, unknown string) error {
	reason := fmt.Sprintf("held: command %s has an UNKNOWN outcome; this job waits until it is reconciled (task.reconcile), then runs, or is cancelled if the reconcile says so", unknown)
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET reason = ? WHERE id = ?`, reason, id); err != nil {
		return fmt.Errorf("hold job %s: %w", id, err)
	}
	return nil
}

// Requeued records why job id is queued again.
func (r runner) Requeued(ctx context.Context, tx *sql.Tx, id string, attempt int) error {
	reason := fmt.Sprintf("requeued: Hearth stopped while attempt %d was running", attempt)
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET reason = ? WHERE id = ?`, reason, id); err != nil {
		return fmt.Errorf("requeue job %s: %w", id, err)
	}
	return nil
}

// DependencyBlocked names the dependency, and for one that was itself
// blocked by a dependency, the root cause.
func (r runner) DependencyBlocked(ctx context.Context, dep, depState string) *primitive.Error {
	var root string
	if depState == StateBlocked {
		_ = r.q.DB.R.QueryRowContext(ctx, `SELECT root_cause FROM jobs WHERE id = ?`, dep).Scan(&root)
	}
	msg := fmt.Sprintf("dependency %s %s", dep, depState)
	if root != "" {
		msg = fmt.Sprintf("dependency %s blocked (root cause: %s)", dep, root)
	} else {
		root = dep + " " + depState
	}
	return primitive.Blocked("dependency", "%s", msg).WithDetails(map[string]any{rootCauseKey: root})
}

// queueArrival queues, in tx, the arrival of j as it is now: a small
// envelope (no exec result) naming its state and, unless it completed,
// code and j.Reason; permitID names the permit a parked job waits for.
func queueArrival(ctx context.Context, tx *sql.Tx, j *jobRow, code, permitID string, now time.Time) error {
	env := &dispatch.Envelope{State: j.State, Primitive: submitPrimitive, FutureID: j.ID, PermitID: permitID, Result: j.view()}
	switch {
	case permitID != "":
		env.State = primitive.StatePending
	case j.State != StateCompleted:
		env.Error = &dispatch.ErrorBody{Code: code, Message: j.Reason}
	}
	payload, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("encode arrival of %s: %w", j.ID, err)
	}
	return dispatch.EnqueueArrival(ctx, tx, j.route, j.ID, payload, now)
}
