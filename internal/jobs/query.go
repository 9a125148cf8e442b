package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// jobRow is a job with what is never shown: its route and environment.
type jobRow struct {
	Job
	route string
	env   map[string]string
}

// jobCols is what a job's own row holds beside its future (which the
// engine owns and dispatch.ClassFutureOf reads).
const jobCols = `command, args, cwd, env, timeout_ms, exit_code, result, reason`

// viewState is a job's state as task.* reports it: a future waiting for
// its dependencies, parked for a permit or held for an UNKNOWN is queued
// (its reason says which).
func viewState(futureState string) string {
	switch futureState {
	case dispatch.StateWaiting, "permit", dispatch.StateHeld:
		return StateQueued
	}
	return futureState
}

// scanJob reads the job's own row (jobCols) onto its future f.
func scanJob(f dispatch.ClassFuture, sc interface{ Scan(...any) error }) (*jobRow, error) {
	r := &jobRow{}
	var args, env string
	var exit sql.NullInt64
	var result sql.NullString
	if err := sc.Scan(&r.Command, &args, &r.Cwd, &env, &r.TimeoutMS, &exit, &result, &r.Reason); err != nil {
		return nil, err
	}
	r.ID, r.route, r.OnInterrupt, r.Attempts, r.Interruptions, r.Outcome = f.ID, f.Route, f.OnInterrupt, f.Attempts, f.Interruptions, f.Outcome
	r.StoppedBy = f.StoppedBy
	r.State = viewState(f.State)
	if err := json.Unmarshal([]byte(args), &r.Args); err != nil {
		return nil, fmt.Errorf("job %s: decode args: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(env), &r.env); err != nil {
		return nil, fmt.Errorf("job %s: decode env: %w", r.ID, err)
	}
	for k := range r.env {
		r.EnvKeys = append(r.EnvKeys, k)
	}
	sort.Strings(r.EnvKeys)
	r.RunAt, r.CreatedAt = msTime(f.RunAt), msTime(f.CreatedAt)
	r.StartedAt, r.FinishedAt = msTimePtr(f.StartedAt), msTimePtr(f.FinishedAt)
	if exit.Valid {
		e := int(exit.Int64)
		r.ExitCode = &e
	}
	if result.Valid {
		r.Result = json.RawMessage(result.String)
	}
	return r, nil
}

// view is the job as reported (no route, no environment values).
func (r *jobRow) view() *Job {
	j := r.Job
	if j.Args == nil {
		j.Args = []string{}
	}
	return &j
}

// row reads job id (of any conversation) in q: its future, then its own
// row. In a transaction the two are one consistent view.
func (q *Queue) row(ctx context.Context, tx dispatch.Querier, id string) (*jobRow, error) {
	f, err := dispatch.ClassFutureOf(ctx, tx, Class, id)
	if err != nil {
		return nil, err
	}
	return scanJob(f, tx.QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = ?`, id))
}

// read reads job id (of any conversation) in a read-only transaction, so
// its future and its row are one consistent view (an ending job's row and
// future are written in one commit).
func (q *Queue) read(ctx context.Context, id string) (*jobRow, error) {
	tx, err := q.DB.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return q.row(ctx, tx, id)
}

// list reads up to limit of route's jobs (every conversation's when route
// is empty), newest first, in one read-only transaction.
func (q *Queue) list(ctx context.Context, route string, limit int) ([]*jobRow, error) {
	tx, err := q.DB.R.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	fs, err := dispatch.ClassFutures(ctx, tx, Class, route, limit)
	if err != nil {
		return nil, err
	}
	out := make([]*jobRow, 0, len(fs))
	for _, f := range fs {
		r, err := scanJob(f, tx.QueryRowContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE id = ?`, f.ID))
		if errors.Is(err, sql.ErrNoRows) {
			continue // a job future whose row is gone is no job to list
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Get returns job id of route.
func (q *Queue) Get(ctx context.Context, route, id string) (*Job, error) {
	if !primitive.ValidID("job", id) {
		return nil, fmt.Errorf("%w: %s", ErrNoJob, id)
	}
	r, err := q.read(ctx, id)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && r.route != route) {
		return nil, fmt.Errorf("%w: %s", ErrNoJob, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", id, err)
	}
	if r.Dependencies, err = dispatch.DepsOf(ctx, q.DB.R, id); err != nil {
		return nil, err
	}
	return r.view(), nil
}

// Wait returns job id of route once its state differs from the state it
// had when Wait was called (queued → running, or an end), at once when it
// is already terminal, or as it is when timeout passes (timedOut true) or
// ctx ends. It blocks on the engine's signal for the job's transitions,
// never by polling. A caller that wants the end calls it again while the
// job is queued or running.
func (q *Queue) Wait(ctx context.Context, e *dispatch.Dispatcher, route, id string, timeout time.Duration) (job *Job, timedOut bool, err error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	entry := ""
	for {
		ch, stop := e.Watch(id)
		j, err := q.Get(ctx, route, id)
		if err != nil {
			stop()
			return nil, false, err
		}
		if entry == "" {
			entry = j.State
		}
		if dispatch.Settled(j.State) || j.State != entry {
			stop()
			return j, false, nil
		}
		select {
		case <-ch:
			continue
		case <-timer.C:
			stop()
			return j, true, nil
		case <-ctx.Done():
			stop()
			return j, true, nil
		}
	}
}

// Cancel cancels job id of route. A queued job is cancelled atomically
// (its dependents become blocked); a running job's process tree is killed
// and Cancel waits, within ctx, for it to be recorded. It returns the job
// afterwards and whether this call cancelled it (false when it had already
// ended).
func (q *Queue) Cancel(ctx context.Context, e *dispatch.Dispatcher, route, id string) (*Job, bool, error) {
	j, err := q.Get(ctx, route, id)
	if err != nil {
		return nil, false, err
	}
	// A claim that StopRun found but whose transaction did not commit
	// leaves the job queued again: it is cancelled as queued (a few
	// rounds at most; each needs a claim that failed).
	for range 3 {
		switch j.State {
		case StateQueued:
			f, err := e.CancelQueued(ctx, route, id)
			if err != nil && !errors.Is(err, dispatch.ErrRunning) {
				return nil, false, err
			}
			if f.State != StateRunning {
				j, err = q.Get(ctx, route, id)
				return j, err == nil && j.State == StateCancelled && f.State == StateCancelled, err
			}
			fallthrough // claimed meanwhile
		case StateRunning:
			e.StopRun(ctx, Class, id, dispatch.Stop{By: callpath.StoppedByCancel, Why: "cancelled by task.cancel while running; its process tree was killed"})
			j, err = q.Get(context.WithoutCancel(ctx), route, id)
			if err != nil {
				return nil, false, err
			}
			if j.State == StateQueued && ctx.Err() == nil {
				continue
			}
			return j, j.State == StateCancelled, nil
		default:
			return j, false, nil
		}
	}
	return j, false, nil
}

// Summary is one line of task.list.
type Summary struct {
	Kind       string     `json:"kind"` // job or future
	ID         string     `json:"id"`
	State      string     `json:"state"`
	Command    string     `json:"command,omitempty"`
	Primitive  string     `json:"primitive,omitempty"`
	Attempts   int        `json:"attempts,omitempty"`
	ExitCode   *int       `json:"exit_code,omitempty"`
	Reason     string     `json:"reason,omitempty"`
	Outcome    string     `json:"outcome,omitempty"`
	StoppedBy  string     `json:"stopped_by,omitempty"`
	RunAt      *time.Time `json:"run_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// ListJobs returns route's newest jobs first, without results.
func (q *Queue) ListJobs(ctx context.Context, route string, limit int) ([]Summary, error) {
	rs, err := q.list(ctx, route, limit)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	out := []Summary{}
	for _, r := range rs {
		runAt := r.RunAt
		out = append(out, Summary{Kind: "job", ID: r.ID, State: r.State, Command: r.Command, Attempts: r.Attempts, ExitCode: r.ExitCode,
			Reason: r.Reason, Outcome: r.Outcome, StoppedBy: r.StoppedBy, RunAt: &runAt, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt})
	}
	return out, nil
}
