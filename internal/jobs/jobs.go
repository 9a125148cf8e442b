// Package jobs is Hearth's durable job queue, reached through the task
// tool: executable jobs with delays, dependencies and an interruption rule.
//
// A job is a future of the one durable-work engine (internal/dispatch,
// class.go), of class "job": its id is its future id, its state, due
// time, attempts, interruptions and interruption rule are the future's,
// its dependencies are future_deps, each run is an attempt the engine
// admits through its gate when it comes due (e-stop, policy, allow-rules,
// permits, the UNKNOWN gate), parks for a permit like any future, journals
// under its own command id (RunCommandID) with its commands row, and
// settles by the engine's one recovery; its arrival goes through the one
// writer. The class has its own slots (max_concurrent_jobs), so queued
// work never takes the slots of interactive calls or of other futures.
// This package owns what only a job has — the jobs table keyed by the
// future id (command, arguments, environment, exit code, exec result, the
// reason task.* reports) — the submit's validation, the job's runner, and
// the task tool. The engine's scheduler sleeps until the next due time or
// a wake-up; there is no polling, so an idle queue costs no CPU however
// many delayed jobs it holds.
//
// A job is queued, running, or terminal (completed, failed, blocked,
// cancelled); a future waiting for its dependencies or parked for a permit
// reads queued. A failed, cancelled or blocked job blocks its queued
// dependents, transitively, with a reason naming the dependency. At
// start-up, jobs that were running when Hearth stopped are requeued, or —
// when submitted with on_interrupt "block" — become blocked with outcome
// "unknown", because their side effects may be half done.
//
// Decisions worth knowing:
//   - attempts counts starts; interruptions counts the starts Hearth
//     stopped under. A job that completed after one interruption shows
//     attempts 2, interruptions 1. A start parked for a permit, or one a
//     crash interrupted before its intent was journaled, is not counted.
//   - task.wait on a job returns when the job's state changes (queued →
//     running, or it ends) — at once when it has already ended — or with
//     timed_out true when its bound passes; a caller that wants the end
//     waits again. On a generic future it returns when the future ends.
//   - A dependency that is no job of the conversation (unknown, or another
//     conversation's: the two read the same) does not refuse the submit:
//     the job is recorded blocked, with a reason naming the dependency.
//   - Every terminal transition queues an arrival (envelope primitive
//     "task.submit", future_id = the job id), except a queued job the
//     caller cancelled: the cancel's answer already says so. A job parked
//     for a permit when it came due also arrives, pending, naming it.
//   - Environment values are stored (a queued job needs them after a
//     restart) but never reported back, journaled or shown in a permit;
//     only their names are.
//   - A graceful stop kills running jobs and leaves them running in the
//     database, so a stop is an interruption exactly like a crash.
//   - Hold (the e-stop) kills running jobs, recording them cancelled and
//     stopped by the e-stop (stopped_by, in the journal too), and
//     starts nothing until Resume; a reset of the e-stop alone does not
//     restart the queue.
package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/machine"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

// Class is the engine class of jobs (futures.class).
const Class = "job"

// Job states.
const (
	StateQueued    = "queued"
	StateRunning   = "running"
	StateCompleted = "completed"
	StateFailed    = "failed"
	StateBlocked   = "blocked"
	StateCancelled = "cancelled"
)

// Interruption rules (on_interrupt).
const (
	OnInterruptRequeue = dispatch.OnInterruptRequeue
	OnInterruptBlock   = dispatch.OnInterruptBlock
)

// OutcomeUnknown marks a job interrupted with on_interrupt "block": it may
// have changed things before Hearth stopped, so it is neither replayed nor
// reported as failed.
const OutcomeUnknown = "unknown"

// ErrNoJob is returned for an unknown job id or a job of another
// conversation; the two are indistinguishable on purpose.
var ErrNoJob = errors.New("no such job in this conversation")

// ExecFunc runs one command with machine.exec's bounds: output beyond
// max_output_bytes spills to an artifact, the timeout and a cancelled
// context kill the whole process tree.
type ExecFunc func(ctx context.Context, call *primitive.Call, in machine.ExecInput) (*machine.ExecResult, error)

// RunCommandID is the command id of attempt of job id: derived from the
// job, so one job's runs are one family in the ledger.
func RunCommandID(jobID string, attempt int) string { return dispatch.RunCommandID(jobID, attempt) }

// Queue is the job class of the engine: the submit, the runner and the
// task tool. Its futures are scheduled by Dispatcher, which is built with
// EngineClass among its classes.
type Queue struct {
	DB   *store.DB
	Exec ExecFunc
	// MaxConcurrent is max_concurrent_jobs: the class's slots.
	MaxConcurrent int
	// DefaultTimeout applies when a job gives no timeout_ms; MaxTimeout
	// bounds the ones given.
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	// Held, when set, reports whether the operator holds the queue (the
	// e-stop holds it until the operator resumes it). It is consulted before
	// anything starts, so a hold survives a restart; Resume wakes the
	// scheduler when it is released.
	Held func(ctx context.Context) (bool, error)

	// runRows holds, by job id, the row an attempt's Run read, for the
	// Ended of that attempt (which takes it out).
	runRows sync.Map
}

// EngineClass is the job class as the engine is built with it. It
// refuses a queue without its parts (DB, Exec), naming the missing field.
func (q *Queue) EngineClass() (dispatch.Class, error) {
	switch {
	case q.DB == nil:
		return dispatch.Class{}, errors.New("build the job queue: it has no database (DB)")
	case q.Exec == nil:
		return dispatch.Class{}, errors.New("build the job queue: it has nothing to run its jobs with (Exec)")
	}
	return dispatch.Class{Name: Class, Slots: q.MaxConcurrent, Runner: runner{q}, Held: func(ctx context.Context) (bool, error) {
		if q.Held == nil {
			return false, nil
		}
		return q.Held(ctx)
	}}, nil
}

// Hold and Resume of the queue are the engine's (Dispatcher.Hold and
// Resume of Class): internal/control holds it when the e-stop latches
// and resumes it on the operator's word. The engine's Start recovers and
// schedules the jobs, and its Stop kills running jobs' process trees and
// leaves them running in the database, so the next start treats them as
// interrupted, exactly as after a crash.

// Job is a job as the task tool reports it. Environment values are never
// echoed back (they may hold credentials); only their names are.
type Job struct {
	ID            string          `json:"id"`
	State         string          `json:"state"`
	Command       string          `json:"command"`
	Args          []string        `json:"args"`
	Cwd           string          `json:"cwd,omitempty"`
	EnvKeys       []string        `json:"env_keys,omitempty"`
	TimeoutMS     int64           `json:"timeout_ms"`
	RunAt         time.Time       `json:"run_at"`
	Dependencies  []string        `json:"dependencies,omitempty"`
	OnInterrupt   string          `json:"on_interrupt"`
	Attempts      int             `json:"attempts"`
	Interruptions int             `json:"interruptions,omitempty"`
	ExitCode      *int            `json:"exit_code,omitempty"`
	Reason        string          `json:"reason,omitempty"`
	Outcome       string          `json:"outcome,omitempty"`
	Result        json.RawMessage `json:"result,omitempty"`
	CreatedAt     time.Time       `json:"created_at"`
	StartedAt     *time.Time      `json:"started_at,omitempty"`
	FinishedAt    *time.Time      `json:"finished_at,omitempty"`
	// StoppedBy says what stopped a cancelled job while it ran: "estop"
	// (the emergency stop) or "cancel" (task.cancel).
	StoppedBy string `json:"stopped_by,omitempty"`
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func msTimePtr(ms sql.NullInt64) *time.Time {
	if !ms.Valid {
		return nil
	}
	t := msTime(ms.Int64)
	return &t
}
