package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/machine"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// newJobs builds the durable job queue. Jobs run through m, their own
// machine.Machine (newMachine), with the same output bounds and spill
// rules as machine.exec but with max_concurrent_jobs slots, so queued work
// never takes the slots of interactive exec calls (and vice versa). Its
// task.* primitives receive the dispatcher running them with each call.
//
// Governance: the queue starts nothing while the operator holds it (the
// hold is read from the database, so it survives a restart); the e-stop
// kills running jobs and holds the queue; the operator's resume releases
// it (both through internal/control); every run is admitted as
// a fresh call and journaled (intent before it starts, outcome in the
// transaction that records its end), and every job found interrupted at
// start-up is journaled in the same transaction that requeues or blocks it.
func (a *App) newJobs(cfg config.Config, m *machine.Machine, arrivals *dispatch.Arrivals) *jobs.Queue {
	q := &jobs.Queue{
		DB:             a.DB,
		Arrivals:       arrivals,
		Exec:           m.Exec,
		BeginRun:       a.beginJobRun,
		EndRun:         a.journalJobEnd,
		Log:            a.Log,
		MaxConcurrent:  cfg.MaxConcurrentJobs,
		DefaultTimeout: m.DefaultTimeout,
		MaxTimeout:     m.MaxTimeout,
		Held:           a.Gov.QueueHeld,
		Interrupted:    a.journalInterruption,
		OnCancelParked: a.Gov.CancelPermitsOf,
	}
	return q
}

// journalInterruption records in the ledger that a job was running when
// Hearth stopped: its run's outcome (and command) is unknown, and the job
// was requeued or (on_interrupt "block") blocked.
func (a *App) journalInterruption(ctx context.Context, tx *sql.Tx, in jobs.Interruption) error {
	if err := a.Gov.InterruptedJobRunTx(ctx, tx, in.CommandID, "task.submit"); err != nil {
		return err
	}
	action := "blocked"
	if in.Requeued {
		action = "requeued"
	} else if err := govern.OpenUnknownTx(ctx, tx, in.JobID, in.Route, "task.submit", time.Now()); err != nil {
		// A blocked interrupted run closes its conversation's gate until
		// task.reconcile {id: job id} (or the operator) settles it.
		return err
	}
	_, err := a.Ledger.AppendTx(ctx, tx, "outcome", map[string]any{
		"job_id": in.JobID, "command_id": in.CommandID, "primitive": "task.submit", "route": in.Route, "attempt": in.Attempt,
		"outcome": "unknown", "interrupted": true, "action": action,
	})
	return err
}

// beginJobRun admits a due job's run exactly as a fresh task.submit of
// that one job would be admitted now (e-stop, policy mode, allow-rules,
// permits, the UNKNOWN gate) and journals it under its own command id.
// The input governance sees, and the operator is shown in a permit, names
// the environment variables but never their values.
func (a *App) beginJobRun(ctx context.Context, r jobs.RunStart) error {
	spec, ok := a.Registry.Lookup("task.submit")
	if !ok {
		return primitive.Blocked("unavailable", "task.submit is not registered; job %s not started", r.JobID)
	}
	env := map[string]string{}
	for k := range r.Input.Env {
		env[k] = ""
	}
	shown := r.Input
	shown.Env = env
	raw, err := json.Marshal(map[string]any{"job": shown})
	if err != nil {
		return primitive.Failed("internal", "encode job %s: %v", r.JobID, err)
	}
	adm := dispatch.NewAdmission(dispatch.Request{Route: r.Route, Spec: spec, Input: raw, CommandID: r.CommandID}, r.JobID)
	pid, err := a.Gov.BeginJobRun(ctx, govern.JobRun{Admission: adm, Submit: r.Submit, Park: r.Park})
	if errors.Is(err, dispatch.ErrPermitRequired) {
		return &jobs.Parked{PermitID: pid}
	}
	return err
}

// journalJobEnd journals the outcome of a run beginJobRun journaled, inside
// the transaction that records the job's terminal state.
func (a *App) journalJobEnd(ctx context.Context, tx *sql.Tx, end jobs.RunEnd) error {
	data := map[string]any{"job_id": end.JobID, "outcome": "receipt"}
	res, err := end.Result, end.Err
	switch {
	case err != nil:
		data["outcome"], data["error_code"] = "tool_error", primitive.AsError(err).Code
	case res.Cancelled || res.TimedOut:
		data["outcome"], data["timed_out"], data["cancelled"] = "tool_error", res.TimedOut, res.Cancelled
	default:
		data["exit_code"] = res.ExitCode
	}
	return a.Gov.EndJobRunTx(ctx, tx, end.CommandID, end.Envelope, data)
}
