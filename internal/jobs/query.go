package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// jobRow is a job with what is never shown: its route and environment.
type jobRow struct {
	Job
	route string
	env   map[string]string
}

// jobFrom is what every job query reads: the job's future and its row.
const jobFrom = ` FROM futures f JOIN jobs j ON j.id = f.id `

const jobCols = `f.id, f.route, j.command, j.args, j.cwd, j.env, j.timeout_ms, COALESCE(f.run_at, f.created_at), COALESCE(f.on_interrupt, 'requeue'),
	f.state, f.attempts, f.interruptions, j.exit_code, j.result, j.reason, f.outcome, f.created_at, f.started_at, f.finished_at`

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

func scanJob(sc interface{ Scan(...any) error }) (*jobRow, error) {
	r := &jobRow{}
	var args, env string
	var runAt, created int64
	var exit, started, finished sql.NullInt64
	var result, outcome sql.NullString
	if err := sc.Scan(&r.ID, &r.route, &r.Command, &args, &r.Cwd, &env, &r.TimeoutMS, &runAt, &r.OnInterrupt, &r.State, &r.Attempts,
		&r.Interruptions, &exit, &result, &r.Reason, &outcome, &created, &started, &finished); err != nil {
		return nil, err
	}
	r.State = viewState(r.State)
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
	r.RunAt, r.CreatedAt = msTime(runAt), msTime(created)
	r.StartedAt, r.FinishedAt = msTimePtr(started), msTimePtr(finished)
	if exit.Valid {
		e := int(exit.Int64)
		r.ExitCode = &e
	}
	if result.Valid {
		r.Result = json.RawMessage(result.String)
	}
	r.Outcome = outcome.String
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

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const rowQuery = `SELECT ` + jobCols + jobFrom + `WHERE f.id = ?`

// row reads job id (of any conversation) in tx.
func (q *Queue) row(ctx context.Context, tx querier, id string) (*jobRow, error) {
	return scanJob(tx.QueryRowContext(ctx, rowQuery, id))
}

// read reads job id (of any conversation) through the reader's prepared
// statement: every run, end and wait reads it.
func (q *Queue) read(ctx context.Context, id string) (*jobRow, error) {
	st, err := q.DB.ReadStmt(ctx, rowQuery)
	if err != nil {
		return nil, err
	}
	return scanJob(st.QueryRowContext(ctx, id))
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
	st, err := q.DB.ReadStmt(ctx, `SELECT dep_id FROM future_deps WHERE future_id = ? ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("read dependencies of %s: %w", id, err)
	}
	defer rows.Close()
	r.Dependencies = []string{}
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, err
		}
		r.Dependencies = append(r.Dependencies, d)
	}
	if err := rows.Err(); err != nil {
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
			e.StopRun(ctx, Class, id, "cancelled by task.cancel while running; its process tree was killed")
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
	RunAt      *time.Time `json:"run_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// ListJobs returns route's newest jobs first, without results.
func (q *Queue) ListJobs(ctx context.Context, route string, limit int) ([]Summary, error) {
	rows, err := q.DB.R.QueryContext(ctx, `SELECT `+jobCols+jobFrom+`WHERE f.route = ? AND f.class = 'job' ORDER BY f.created_at DESC, f.rowid DESC LIMIT ?`, route, limit)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	out := []Summary{}
	for rows.Next() {
		r, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		runAt := r.RunAt
		out = append(out, Summary{Kind: "job", ID: r.ID, State: r.State, Command: r.Command, Attempts: r.Attempts, ExitCode: r.ExitCode,
			Reason: r.Reason, Outcome: r.Outcome, RunAt: &runAt, CreatedAt: r.CreatedAt, FinishedAt: r.FinishedAt})
	}
	return out, rows.Err()
}
