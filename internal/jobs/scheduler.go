package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/machine"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// submitPrimitive names jobs in arrival envelopes.
const submitPrimitive = "task.submit"

// loop is the scheduler. Each turn starts what is due and runnable within
// the concurrency cap, then sleeps until the next due time of a runnable
// job, a wake-up (submit, completion, cancel) or shutdown. Jobs waiting on
// dependencies need no timer: the dependency's completion wakes the loop.
func (q *Queue) loop() {
	defer close(q.loopDone)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		next, err := q.schedule()
		if err != nil {
			if q.ctx.Err() != nil {
				return
			}
			q.Log.Error("schedule jobs", "err", err)
			next = time.Now().Add(time.Second) // retry; the database may be busy
		}
		if next.IsZero() {
			timer.Stop()
		} else {
			timer.Reset(max(time.Until(next), 0))
		}
		select {
		case <-q.ctx.Done():
			timer.Stop()
			return
		case <-q.wakeCh:
		case <-timer.C:
		}
	}
}

// schedule starts due runnable jobs in free slots and returns when the
// next not-yet-due runnable job is due (zero when there is none).
func (q *Queue) schedule() (time.Time, error) {
	q.mu.Lock()
	free, held := q.MaxConcurrent-len(q.running), q.held
	q.mu.Unlock()
	if !held && q.Held != nil {
		var err error
		if held, err = q.Held(q.ctx); err != nil {
			return time.Time{}, fmt.Errorf("read queue hold: %w", err)
		}
	}
	if held {
		return time.Time{}, nil // Resume wakes the loop
	}
	now := time.Now().UnixMilli()
	if free > 0 {
		started, err := q.claim(now, free)
		if err != nil {
			return time.Time{}, err
		}
		for _, s := range started {
			q.wg.Add(1)
			go q.run(s.job, s.rj, s.ctx)
		}
	}
	var next sql.NullInt64
	err := q.DB.R.QueryRowContext(q.ctx, `SELECT MIN(run_at) FROM jobs WHERE state = 'queued' AND waiting = 0 AND run_at > ?`, now).Scan(&next)
	if err != nil {
		return time.Time{}, fmt.Errorf("find next due job: %w", err)
	}
	if !next.Valid {
		return time.Time{}, nil
	}
	// One millisecond late rather than early: run_at has millisecond
	// resolution and the wall clock, not the monotonic one, decides.
	return time.UnixMilli(next.Int64 + 1), nil
}

type startable struct {
	job *jobRow
	rj  *runningJob
	ctx context.Context
}

// claim marks up to n due runnable jobs running (attempts+1) in one
// transaction. Each is registered as running before the commit, so a
// cancel that sees the committed state always finds its runner. After the
// commit it wakes their waiters: queued → running is a change task.wait
// reports.
func (q *Queue) claim(now int64, n int) ([]startable, error) {
	var out []startable
	unregister := func() {
		q.mu.Lock()
		for _, s := range out {
			delete(q.running, s.job.ID)
			s.rj.cancel()
		}
		q.mu.Unlock()
		out = nil
	}
	err := q.DB.InTx(q.ctx, func(tx *sql.Tx) error {
		unregister()
		rows, err := tx.QueryContext(q.ctx, `SELECT `+jobCols+` FROM jobs
			WHERE state = 'queued' AND waiting = 0 AND run_at <= ? ORDER BY run_at, rowid LIMIT ?`, now, n)
		if err != nil {
			return fmt.Errorf("find due jobs: %w", err)
		}
		var due []*jobRow
		for rows.Next() {
			r, err := scanJob(rows)
			if err != nil {
				rows.Close()
				return err
			}
			due = append(due, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		started := time.Now()
		for _, r := range due {
			if _, err := tx.ExecContext(q.ctx, `UPDATE jobs SET state = 'running', attempts = attempts + 1, started_at = ? WHERE id = ? AND state = 'queued'`,
				started.UnixMilli(), r.ID); err != nil {
				return fmt.Errorf("claim job %s: %w", r.ID, err)
			}
			r.State, r.Attempts, r.StartedAt = StateRunning, r.Attempts+1, &started
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.held {
			return errHeld
		}
		for _, r := range due {
			ctx, cancel := context.WithCancel(q.ctx)
			rj := &runningJob{cancel: cancel, done: make(chan struct{})}
			q.running[r.ID] = rj
			out = append(out, startable{job: r, rj: rj, ctx: ctx})
		}
		return nil
	})
	if errors.Is(err, errHeld) {
		return nil, nil
	}
	if err != nil {
		unregister()
		return nil, err
	}
	claimed := make([]string, len(out))
	for i, s := range out {
		claimed[i] = s.job.ID
	}
	q.notify(claimed)
	return out, nil
}

// errHeld aborts a claim that raced with Hold.
var errHeld = errors.New("queue held")

// run executes one claimed job and records its outcome. When Hearth is
// shutting down and the run was killed for that reason, nothing is
// recorded: the job stays running in the database and the next start
// treats it as interrupted, exactly as after a crash.
func (q *Queue) run(j *jobRow, rj *runningJob, ctx context.Context) {
	defer q.wg.Done()
	defer func() {
		q.mu.Lock()
		delete(q.running, j.ID)
		q.mu.Unlock()
		rj.cancel()
		close(rj.done)
		q.wake()
	}()
	in := machine.ExecInput{Command: j.Command, Args: j.Args, Cwd: j.Cwd, Env: j.env, TimeoutMS: j.TimeoutMS}
	cmd := RunCommandID(j.ID, j.Attempts)
	call := &primitive.Call{Route: j.route, FutureID: j.ID, CommandID: cmd}
	var res *machine.ExecResult
	var err error
	var end *RunEnd
	if q.BeginRun != nil {
		err = q.BeginRun(ctx, RunStart{JobID: j.ID, Route: j.route, CommandID: cmd, Submit: j.submit, Attempt: j.Attempts, Input: in,
			Park: func(ctx context.Context, tx *sql.Tx, permitID string) error { return q.parkTx(ctx, tx, j, permitID) }})
		var parked *Parked
		if errors.As(err, &parked) {
			q.notify([]string{j.ID})
			return
		}
	}
	if err == nil {
		res, err = q.execSafely(ctx, call, in)
		if q.BeginRun != nil {
			end = &RunEnd{JobID: j.ID, Route: j.route, CommandID: cmd, Result: res, Err: err}
		}
	}
	killed := err != nil || res.Cancelled
	why := rj.why.Load()
	if killed && why == nil && q.ctx.Err() != nil {
		return
	}
	var state, code, reason string
	var exit *int
	var result json.RawMessage
	switch {
	case killed && why != nil:
		state, code, reason = StateCancelled, "cancelled", *why
	case err != nil:
		pe := primitive.AsError(err)
		state, code, reason = StateFailed, pe.Code, pe.Message
		if pe.State == primitive.StateBlocked {
			state = StateBlocked // refused by governance at run time
		}
	case res.TimedOut:
		state, code, reason = StateFailed, "timed_out", fmt.Sprintf("timed out after %d ms; its process tree was killed", j.TimeoutMS)
	case res.ExitCode != 0:
		state, code, reason = StateFailed, "exit_code", fmt.Sprintf("exited with code %d", res.ExitCode)
	default:
		state = StateCompleted
	}
	if res != nil {
		exit = &res.ExitCode
		result, _ = json.Marshal(res)
	}
	q.finish(j, state, code, reason, exit, result, end)
}

func (q *Queue) execSafely(ctx context.Context, call *primitive.Call, in machine.ExecInput) (res *machine.ExecResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, primitive.Failed("internal", "job runner panicked: %v", p)
		}
	}()
	return q.Exec(ctx, call, in)
}

// finish records a running job's terminal state, journals the run's end
// (when end is set), queues its arrival, releases or blocks its dependents
// — all in one transaction — and wakes the waiters of every job that
// changed.
func (q *Queue) finish(j *jobRow, state, code, reason string, exit *int, result json.RawMessage, end *RunEnd) {
	ctx := context.WithoutCancel(q.ctx)
	now := time.Now()
	j.State, j.Reason, j.ExitCode, j.Result, j.FinishedAt = state, reason, exit, result, &now
	env := &dispatch.Envelope{State: state, Primitive: submitPrimitive, Result: j.view()}
	if state != StateCompleted {
		env.Error = &dispatch.ErrorBody{Code: code, Message: reason}
	}
	payload := q.Arrivals.Payload(ctx, j.route, j.ID, env)
	var changed []string
	err := q.DB.InTx(ctx, func(tx *sql.Tx) error {
		changed = changed[:0]
		var exitVal, resultVal any
		if exit != nil {
			exitVal = *exit
		}
		if result != nil {
			resultVal = string(result)
		}
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET state = ?, exit_code = ?, result = ?, reason = ?, finished_at = ? WHERE id = ? AND state = 'running'`,
			state, exitVal, resultVal, reason, now.UnixMilli(), j.ID)
		if err != nil {
			return fmt.Errorf("record job %s: %w", j.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		changed = append(changed, j.ID)
		if end != nil && q.EndRun != nil {
			end.Envelope = env
			if err := q.EndRun(ctx, tx, *end); err != nil {
				return fmt.Errorf("journal the end of job %s: %w", j.ID, err)
			}
		}
		if err := dispatch.EnqueueArrival(ctx, tx, j.route, j.ID, payload, now); err != nil {
			return err
		}
		if state == StateCompleted {
			_, err := tx.ExecContext(ctx, `UPDATE jobs SET waiting = waiting - 1
				WHERE state = 'queued' AND id IN (SELECT job_id FROM job_deps WHERE dep_id = ?)`, j.ID)
			if err != nil {
				return fmt.Errorf("release dependents of %s: %w", j.ID, err)
			}
			return nil
		}
		blocked, err := blockDependents(ctx, tx, j.ID, state, now)
		changed = append(changed, blocked...)
		return err
	})
	if err != nil {
		// The job stays running in the database; the next start requeues
		// it (or blocks it, per on_interrupt) rather than losing it.
		q.Log.Error("finish job", "job", j.ID, "err", err)
	}
	q.notify(changed)
}

// blockDependents blocks every queued job that depends, directly or
// transitively, on root (which has just become failed, cancelled or
// blocked), queues an arrival for each, and returns their ids. A direct
// dependent's reason names root and its state; a transitive one's names its
// own blocked dependency and the root cause.
func blockDependents(ctx context.Context, tx *sql.Tx, root, rootState string, now time.Time) ([]string, error) {
	type node struct{ id, reason string }
	cause := root + " " + rootState
	queue := []node{{root, "dependency " + cause}}
	var blocked []string
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		rows, err := tx.QueryContext(ctx, `SELECT `+jobColsOf("j")+` FROM job_deps d JOIN jobs j ON j.id = d.job_id
			WHERE d.dep_id = ? AND j.state = 'queued'`, n.id)
		if err != nil {
			return blocked, fmt.Errorf("find dependents of %s: %w", n.id, err)
		}
		var deps []*jobRow
		for rows.Next() {
			r, err := scanJob(rows)
			if err != nil {
				rows.Close()
				return blocked, err
			}
			deps = append(deps, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return blocked, err
		}
		for _, r := range deps {
			if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'blocked', reason = ?, finished_at = ? WHERE id = ? AND state = 'queued'`,
				n.reason, now.UnixMilli(), r.ID); err != nil {
				return blocked, fmt.Errorf("block job %s: %w", r.ID, err)
			}
			r.State, r.Reason, r.FinishedAt = StateBlocked, n.reason, &now
			if err := queueBlockedArrival(ctx, tx, r, now); err != nil {
				return blocked, err
			}
			blocked = append(blocked, r.ID)
			queue = append(queue, node{r.ID, fmt.Sprintf("dependency %s blocked (root cause: %s)", r.ID, cause)})
		}
	}
	return blocked, nil
}

// queueBlockedArrival queues, in tx, the arrival of r, a job just blocked
// by a dependency (r.Reason names it).
func queueBlockedArrival(ctx context.Context, tx *sql.Tx, r *jobRow, now time.Time) error {
	return queueArrival(ctx, tx, r, "dependency", "", now)
}

// queueArrival queues, in tx, the arrival of r as it is now: a small
// envelope (no exec result) naming its state and, unless it completed,
// code and r.Reason; permitID names the permit a parked job waits for. A
// run's end, whose result may need to spill, goes through finish instead.
func queueArrival(ctx context.Context, tx *sql.Tx, r *jobRow, code, permitID string, now time.Time) error {
	env := &dispatch.Envelope{State: r.State, Primitive: submitPrimitive, FutureID: r.ID, PermitID: permitID, Result: r.view()}
	switch {
	case permitID != "":
		env.State = primitive.StatePending
	case r.State != StateCompleted:
		env.Error = &dispatch.ErrorBody{Code: code, Message: r.Reason}
	}
	payload, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("encode arrival of %s: %w", r.ID, err)
	}
	return dispatch.EnqueueArrival(ctx, tx, r.route, r.ID, payload, now)
}

// recover settles jobs that were running when the previous process
// stopped: requeued with their interruption counted, or — on_interrupt
// "block" — blocked with outcome unknown (never replayed), which also
// blocks their dependents. Queued jobs need nothing: they survive as they
// are.
func (q *Queue) recover(ctx context.Context) error {
	var changed []string
	err := q.DB.InTx(ctx, func(tx *sql.Tx) error {
		changed = changed[:0]
		rows, err := tx.QueryContext(ctx, `SELECT `+jobCols+` FROM jobs WHERE state = 'running' ORDER BY rowid`)
		if err != nil {
			return fmt.Errorf("find interrupted jobs: %w", err)
		}
		var interrupted []*jobRow
		for rows.Next() {
			r, err := scanJob(rows)
			if err != nil {
				rows.Close()
				return err
			}
			interrupted = append(interrupted, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		now := time.Now()
		for _, r := range interrupted {
			requeue := r.OnInterrupt != OnInterruptBlock
			if requeue {
				reason := fmt.Sprintf("requeued: Hearth stopped while attempt %d was running", r.Attempts)
				if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'queued', interruptions = interruptions + 1, started_at = NULL, reason = ? WHERE id = ?`,
					reason, r.ID); err != nil {
					return fmt.Errorf("requeue job %s: %w", r.ID, err)
				}
			} else {
				reason := fmt.Sprintf("Hearth stopped while attempt %d was running; not replayed (on_interrupt: block). Re-read what it may have changed before resubmitting.", r.Attempts)
				if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = 'blocked', outcome = 'unknown', interruptions = interruptions + 1, reason = ?, finished_at = ? WHERE id = ?`,
					reason, now.UnixMilli(), r.ID); err != nil {
					return fmt.Errorf("block interrupted job %s: %w", r.ID, err)
				}
				r.State, r.Reason, r.Outcome, r.Interruptions, r.FinishedAt = StateBlocked, reason, OutcomeUnknown, r.Interruptions+1, &now
				if err := queueArrival(ctx, tx, r, OutcomeUnknown, "", now); err != nil {
					return err
				}
				changed = append(changed, r.ID)
				blocked, err := blockDependents(ctx, tx, r.ID, StateBlocked, now)
				changed = append(changed, blocked...)
				if err != nil {
					return err
				}
			}
			if q.Interrupted != nil {
				if err := q.Interrupted(ctx, tx, Interruption{JobID: r.ID, Route: r.route, CommandID: RunCommandID(r.ID, r.Attempts), Command: r.Command, Attempt: r.Attempts, Requeued: requeue}); err != nil {
					return fmt.Errorf("journal interruption of job %s: %w", r.ID, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recover jobs: %w", err)
	}
	q.notify(changed)
	return nil
}
