package app

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/machine"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// estopJobReason is what a job killed by the e-stop reports.
const estopJobReason = "cancelled by the e-stop; its process tree was killed"

// newJobs builds the durable job queue. Jobs run through their own
// machine.Machine, with the same output bounds and spill rules as
// machine.exec but with max_concurrent_jobs slots, so queued work never
// takes the slots of interactive exec calls (and vice versa). Its
// Dispatcher is set once the dispatcher exists.
//
// Governance: the queue starts nothing while the operator holds it (the
// hold is read from the database, so it survives a restart); the e-stop
// kills running jobs and holds the queue; the operator's resume releases
// it; every run is journaled (intent before it starts, outcome in the
// transaction that records its end), and every job found interrupted at
// start-up is journaled in the same transaction that requeues or blocks it.
func (a *App) newJobs(cfg config.Config) *jobs.Queue {
	m := machine.New(cfg.MaxConcurrentJobs)
	m.Artifacts = a.Artifacts
	m.MaxOutputBytes = cfg.MaxOutputBytes
	m.MaxCaptureBytes = cfg.MaxArtifactBytes
	m.DefaultTimeout = time.Duration(cfg.ExecTimeoutMS) * time.Millisecond
	m.MaxTimeout = time.Duration(cfg.MaxExecTimeoutMS) * time.Millisecond
	q := &jobs.Queue{
		DB:             a.DB,
		Exec:           m.Exec,
		BeginRun:       a.beginJobRun,
		EndRun:         a.journalJobEnd,
		Log:            a.Log,
		MaxConcurrent:  cfg.MaxConcurrentJobs,
		DefaultTimeout: m.DefaultTimeout,
		MaxTimeout:     m.MaxTimeout,
		Held:           a.Gov.QueueHeld,
		Interrupted:    a.journalInterruption,
	}
	a.Gov.OnEStop = append(a.Gov.OnEStop, func() { q.Hold(estopJobReason) })
	a.Gov.OnQueueResume = append(a.Gov.OnQueueResume, q.Resume)
	return q
}

// journalInterruption records in the ledger that a job was running when
// Hearth stopped: its run's outcome is unknown, and the job was requeued
// or (on_interrupt "block") blocked.
func (a *App) journalInterruption(ctx context.Context, tx *sql.Tx, in jobs.Interruption) error {
	action := "blocked"
	if in.Requeued {
		action = "requeued"
	} else if err := govern.OpenUnknownTx(ctx, tx, in.JobID, in.Route, "task.submit", time.Now()); err != nil {
		// A blocked interrupted run closes its conversation's gate until
		// task.reconcile {id: job id} (or the operator) settles it.
		return err
	}
	_, err := a.Ledger.AppendTx(ctx, tx, "outcome", map[string]any{
		"job_id": in.JobID, "primitive": "task.submit", "route": in.Route, "attempt": in.Attempt,
		"outcome": "unknown", "interrupted": true, "action": action,
	})
	return err
}

// beginJobRun journals a run of a durable job like any other side effect,
// before its process starts; a journal failure (or an e-stop, read-only
// mode) refuses the run.
func (a *App) beginJobRun(ctx context.Context, call *primitive.Call, in machine.ExecInput) error {
	raw, _ := json.Marshal(in)
	sum := sha256.Sum256(raw)
	return a.Gov.BeginJob(ctx, call.Route, call.FutureID, hex.EncodeToString(sum[:]))
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
	_, err = a.Ledger.AppendTx(ctx, tx, "outcome", data)
	return err
}
