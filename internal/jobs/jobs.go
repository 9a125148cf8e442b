// Package jobs is Hearth's durable job queue, reached through the task
// tool: executable jobs with delays, dependencies and an interruption rule,
// kept in SQLite and run by a scheduler that sleeps until the next due time
// or until something changes (a submit, a completion, a cancel) — there is
// no polling loop, so an idle queue costs no CPU however many delayed jobs
// it holds.
//
// The database is the source of truth. A job is queued, running, or
// terminal (completed, failed, blocked, cancelled); every transition is one
// transaction, and a terminal transition queues the job's arrival in its
// conversation's mailbox in the same commit. A failed, cancelled or blocked
// job blocks its queued dependents, transitively, with a reason naming the
// dependency. At start-up, jobs that were running when Hearth stopped are
// requeued, or — when submitted with on_interrupt "block" — become blocked
// with outcome "unknown", because their side effects may be half done.
//
// Decisions worth knowing:
//   - attempts counts starts; interruptions counts the starts Hearth
//     stopped under. A job that completed after one interruption shows
//     attempts 2, interruptions 1.
//   - task.wait on a job returns when the job's state changes (queued →
//     running, or it ends) — at once when it has already ended — or with
//     timed_out true when its bound passes; a caller that wants the end
//     waits again. On a generic future it returns when the future ends.
//   - A dependency that is no job of the conversation (unknown, or another
//     conversation's: the two read the same) does not refuse the submit:
//     the job is recorded blocked, with a reason naming the dependency.
//   - Every terminal transition queues an arrival (envelope primitive
//     "task.submit", future_id = the job id), except a queued job the
//     caller cancelled: the cancel's answer already says so.
//   - Environment values are stored (a queued job needs them after a
//     restart) but never reported back; only their names are.
//   - A graceful stop kills running jobs and leaves them running in the
//     database, so a stop is an interruption exactly like a crash.
//   - Hold (the e-stop) kills running jobs, recording them cancelled, and
//     starts nothing until Resume; a reset of the e-stop alone does not
//     restart the queue.
package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/machine"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/store"
)

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
	OnInterruptRequeue = "requeue"
	OnInterruptBlock   = "block"
)

// OutcomeUnknown marks a job interrupted with on_interrupt "block": it may
// have changed things before Hearth stopped, so it is neither replayed nor
// reported as failed.
const OutcomeUnknown = "unknown"

// Terminal reports whether a job state is final.
func Terminal(state string) bool { return state != StateQueued && state != StateRunning }

// ErrNoJob is returned for an unknown job id or a job of another
// conversation; the two are indistinguishable on purpose.
var ErrNoJob = errors.New("no such job in this conversation")

// ExecFunc runs one command with machine.exec's bounds: output beyond
// max_output_bytes spills to an artifact, the timeout and a cancelled
// context kill the whole process tree.
type ExecFunc func(ctx context.Context, call *primitive.Call, in machine.ExecInput) (*machine.ExecResult, error)

// RunStart is a due job's run as the queue asks governance to admit it:
// exactly as a fresh task.submit of that one job would be admitted now.
type RunStart struct {
	JobID string
	Route string
	// CommandID is the run's own command id (RunCommandID); Submit is the
	// command id of the task.submit that queued the job.
	CommandID string
	Submit    string
	Attempt   int
	// Input is what the run executes. Its environment values must never be
	// journaled or shown; only their names.
	Input machine.ExecInput
	// Park records, inside the transaction that asks the operator for a
	// permit, that the job waits for it (BeginRun then returns *Parked).
	Park func(ctx context.Context, tx *sql.Tx, permitID string) error
}

// Parked is BeginRun's answer for a run that waits for the operator's
// permit: the job is queued again, waiting for PermitID.
type Parked struct{ PermitID string }

func (p *Parked) Error() string { return "waiting for operator permit " + p.PermitID }

// RunCommandID is the command id of attempt of job id: derived from the
// job, so one job's runs are one family in the ledger.
func RunCommandID(jobID string, attempt int) string {
	return fmt.Sprintf("%s/run%d", jobID, attempt)
}

// RunEnd describes how a journaled run of a job ended.
type RunEnd struct {
	JobID string
	Route string
	// CommandID is the run's command id; Envelope is the job's terminal
	// envelope, as its arrival carries it.
	CommandID string
	Envelope  *dispatch.Envelope
	// Result and Err are what the run returned.
	Result *machine.ExecResult
	Err    error
}

// Interruption describes a job found running at start-up.
type Interruption struct {
	JobID string
	Route string
	// CommandID is the interrupted run's command id.
	CommandID string
	Command   string
	Attempt   int
	// Requeued is true for on_interrupt "requeue"; false means the job is
	// now blocked with outcome unknown.
	Requeued bool
}

// Queue is the job queue and its scheduler.
type Queue struct {
	DB *store.DB
	// Arrivals is the arrival writer every terminal job's envelope goes
	// through (the one the dispatcher's futures use). Required.
	Arrivals *dispatch.Arrivals
	Exec     ExecFunc
	Log      *slog.Logger
	// MaxConcurrent is max_concurrent_jobs.
	MaxConcurrent int
	// DefaultTimeout applies when a job gives no timeout_ms; MaxTimeout
	// bounds the ones given.
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	// Interrupted, when set, is called inside the start-up transaction for
	// every job that was running when Hearth stopped, so that the
	// interruption can be journaled in the same commit.
	Interrupted func(ctx context.Context, tx *sql.Tx, in Interruption) error
	// BeginRun, when set, admits a run as a fresh call and journals it
	// before its process starts; a *Parked answer parks the job for a
	// permit, any other error refuses the run, which ends with that error
	// and nothing more journaled. EndRun, when set, journals the end of a
	// run BeginRun journaled, inside the transaction that records the job's
	// terminal state: a crash leaves both or neither, never a journaled
	// outcome for a job the next start then treats as interrupted (and
	// requeues).
	BeginRun func(ctx context.Context, r RunStart) error
	EndRun   func(ctx context.Context, tx *sql.Tx, end RunEnd) error
	// Held, when set, reports whether the operator holds the queue (the
	// e-stop holds it until the operator resumes it). It is consulted before
	// anything starts, so a hold survives a restart; Resume wakes the
	// scheduler when it is released.
	Held func(ctx context.Context) (bool, error)
	// OnCancelParked, when set, is told about a queued job cancelled
	// before it started, so that a permit its run asked for is withdrawn.
	OnCancelParked func(ctx context.Context, jobID string)

	ctx      context.Context
	cancel   context.CancelFunc
	wakeCh   chan struct{}
	loopDone chan struct{}
	wg       sync.WaitGroup

	mu       sync.Mutex
	running  map[string]*runningJob
	watchers map[string][]chan struct{}
	// held is set by Hold and cleared by Resume. It is checked under mu
	// where claimed jobs are registered, so a job either is registered
	// before Hold (and killed by it) or is not started at all.
	held bool
	// refused holds, between a permit's refusal and its commit's Changed,
	// the dependents the refusal blocked.
	refused map[string][]string
}

type runningJob struct {
	cancel context.CancelFunc
	// why, when set, says who ended the run on purpose (task.cancel, the
	// e-stop); a run killed without it was killed by a shutdown.
	why  atomic.Pointer[string]
	done chan struct{}
}

// stop kills the run's process tree, recording why.
func (rj *runningJob) stop(why string) {
	rj.why.CompareAndSwap(nil, &why)
	rj.cancel()
}

// Start settles jobs a previous process left running and starts the
// scheduler. Work runs on a context detached from ctx and ends with Stop.
func (q *Queue) Start(ctx context.Context) error {
	if q.Arrivals == nil {
		return errors.New("start the job queue: it has no arrival writer (Arrivals)")
	}
	if q.Log == nil {
		q.Log = slog.New(slog.DiscardHandler)
	}
	if q.MaxConcurrent < 1 {
		q.MaxConcurrent = 1
	}
	q.ctx, q.cancel = context.WithCancel(context.WithoutCancel(ctx))
	q.wakeCh = make(chan struct{}, 1)
	q.loopDone = make(chan struct{})
	q.mu.Lock()
	if q.running == nil {
		q.running = map[string]*runningJob{}
	}
	if q.watchers == nil {
		q.watchers = map[string][]chan struct{}{}
	}
	q.mu.Unlock()
	if err := q.recover(ctx); err != nil {
		q.cancel()
		return err
	}
	go q.loop()
	return nil
}

// Stop stops scheduling, kills running jobs' process trees and waits for
// their runners. Those jobs stay running in the database, so the next Start
// treats them as interrupted, exactly as after a crash.
func (q *Queue) Stop() {
	if q.cancel == nil {
		return
	}
	q.cancel()
	<-q.loopDone
	q.wg.Wait()
}

// Hold stops the queue from starting anything and kills the process tree
// of every running job, which is recorded cancelled with reason (its
// dependents become blocked). The e-stop calls it; only Resume releases it.
func (q *Queue) Hold(reason string) {
	q.mu.Lock()
	q.held = true
	var running []*runningJob
	for _, rj := range q.running {
		running = append(running, rj)
	}
	q.mu.Unlock()
	for _, rj := range running {
		rj.stop(reason)
	}
}

// Resume releases a Hold and lets due jobs start.
func (q *Queue) Resume() {
	q.mu.Lock()
	q.held = false
	q.mu.Unlock()
	q.wake()
}

// wake nudges the scheduler; it never blocks.
func (q *Queue) wake() {
	select {
	case q.wakeCh <- struct{}{}:
	default:
	}
}

// watch returns a channel closed when job id next changes state.
func (q *Queue) watch(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	q.mu.Lock()
	if q.watchers == nil {
		q.watchers = map[string][]chan struct{}{}
	}
	q.watchers[id] = append(q.watchers[id], ch)
	q.mu.Unlock()
	return ch, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		ws := q.watchers[id]
		for i, w := range ws {
			if w == ch {
				q.watchers[id] = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(q.watchers[id]) == 0 {
			delete(q.watchers, id)
		}
	}
}

func (q *Queue) notify(ids []string) {
	q.mu.Lock()
	var chans []chan struct{}
	for _, id := range ids {
		chans = append(chans, q.watchers[id]...)
		delete(q.watchers, id)
	}
	q.mu.Unlock()
	for _, ch := range chans {
		close(ch)
	}
}

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
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func msTimePtr(ms sql.NullInt64) *time.Time {
	if !ms.Valid {
		return nil
	}
	t := msTime(ms.Int64)
	return &t
}
