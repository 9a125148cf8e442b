package jobs

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/machine"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// MaxBatch bounds the jobs of one submit.
const MaxBatch = 1000

// MaxDelay bounds how far ahead a job may be scheduled.
const MaxDelay = 366 * 24 * time.Hour

// JobInput is one job as submitted.
type JobInput struct {
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Cwd       string            `json:"cwd"`
	Env       map[string]string `json:"env"`
	TimeoutMS int64             `json:"timeout_ms"`
	DelayMS   *int64            `json:"delay_ms"`
	RunAt     string            `json:"run_at"`
	// Dependencies holds job id strings and, within jobs[], integer
	// indexes into the same batch.
	Dependencies []json.RawMessage `json:"dependencies"`
	OnInterrupt  string            `json:"on_interrupt"`
}

// Submitted is one accepted job.
type Submitted struct {
	ID     string    `json:"id"`
	State  string    `json:"state"`
	RunAt  time.Time `json:"run_at"`
	Reason string    `json:"reason,omitempty"`
}

// depMissing marks, during a submit, a dependency that is no job of the
// submitting conversation. It is no job state.
const depMissing = "missing"

// planned is a validated job waiting to be inserted.
type planned struct {
	in        JobInput
	id        string
	field     string // "job" or "jobs[i]", for error text
	timeoutMS int64
	runAt     int64
	extDeps   []string // job ids outside the batch
	batchDeps []int    // indexes inside the batch
}

func invalid(field, format string, a ...any) error {
	return primitive.Failed("invalid_input", "task.submit: field %q: %s", field, fmt.Sprintf(format, a...))
}

// SubmitFor validates and queues jobs for route, on behalf of the
// task.submit command commandID (the parent of their runs, see
// callpath.Admission.Parent), in one transaction: either all are accepted
// or none. batch says the jobs came as jobs[] (integer dependencies are
// batch indexes); otherwise there is exactly one, from job. A job whose
// dependency failed, was cancelled or blocked, or is no job of route is
// accepted as blocked, with its arrival queued in the same commit. e is
// the engine that schedules them; its job class is woken after the commit.
func (q *Queue) SubmitFor(ctx context.Context, e *dispatch.Dispatcher, route, commandID string, jobs []JobInput, batch bool) ([]Submitted, error) {
	if len(jobs) == 0 {
		return nil, primitive.Failed("invalid_input", "task.submit: give job (one object) or jobs (a non-empty array)")
	}
	if len(jobs) > MaxBatch {
		return nil, invalid("jobs", "at most %d jobs per submit", MaxBatch)
	}
	now := time.Now()
	plan := make([]*planned, len(jobs))
	for i, in := range jobs {
		field := "job"
		if batch {
			field = fmt.Sprintf("jobs[%d]", i)
		}
		p, err := q.validate(field, in, now, len(jobs), batch)
		if err != nil {
			return nil, err
		}
		p.id = primitive.NewID("job")
		plan[i] = p
	}
	order, err := topoOrder(plan)
	if err != nil {
		return nil, err
	}

	out := make([]Submitted, len(plan))
	err = q.DB.InTx(ctx, func(tx *sql.Tx) error {
		// depState maps every dependency (outside and inside the batch) to
		// its state as of this transaction, which holds the write lock, so
		// no dependency can change state before the jobs are recorded. A
		// dependency that is no job of route — unknown, or another
		// conversation's, which must read the same — maps to depMissing.
		depState := map[string]string{}
		for _, p := range plan {
			for _, d := range p.extDeps {
				if _, seen := depState[d]; seen {
					continue
				}
				f, err := dispatch.ClassFutureOf(ctx, tx, Class, d)
				if errors.Is(err, sql.ErrNoRows) || (err == nil && f.Route != route) {
					depState[d] = depMissing
					continue
				}
				if err != nil {
					return fmt.Errorf("read dependency %s: %w", d, err)
				}
				depState[d] = viewState(f.State)
			}
		}
		for _, i := range order {
			p := plan[i]
			deps := append([]string(nil), p.extDeps...)
			for _, b := range p.batchDeps {
				deps = append(deps, plan[b].id)
			}
			deps = dedupe(deps)
			state, reason, waiting := StateQueued, "", false
			linked := deps[:0:0] // the dependencies recorded in future_deps
			for _, d := range deps {
				st := depState[d]
				if st != depMissing {
					linked = append(linked, d)
				}
				switch st {
				case StateCompleted:
				case depMissing:
					if state == StateQueued {
						state, reason = StateBlocked, fmt.Sprintf("dependency %s missing (%s)", d, ErrNoJob)
					}
				case StateFailed, StateCancelled, StateBlocked:
					if state == StateQueued {
						state, reason = StateBlocked, fmt.Sprintf("dependency %s %s", d, st)
					}
				default:
					waiting = true
				}
			}
			args, _ := json.Marshal(nonNil(p.in.Args))
			env, _ := json.Marshal(nonNilMap(p.in.Env))
			onInt := p.in.OnInterrupt
			if onInt == "" {
				onInt = OnInterruptRequeue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO jobs(id, command, args, cwd, env, timeout_ms, reason) VALUES (?,?,?,?,?,?,?)`,
				p.id, p.in.Command, string(args), p.in.Cwd, string(env), p.timeoutMS, reason); err != nil {
				return fmt.Errorf("insert job: %w", err)
			}
			s := dispatch.Scheduled{ID: p.id, Route: route, Primitive: submitPrimitive, Input: runInput(p.in, p.timeoutMS), Class: Class,
				RunAt: time.UnixMilli(p.runAt), OnInterrupt: onInt, Parent: commandID, Deps: linked, Waiting: waiting}
			if state == StateBlocked {
				// Blocked before it could start: its arrival is queued in
				// this commit, as for a job blocked later by a dependency.
				s.Settled = &dispatch.Envelope{State: StateBlocked, Primitive: submitPrimitive, FutureID: p.id,
					Error: &dispatch.ErrorBody{Code: "dependency", Message: reason}}
			}
			if err := dispatch.ScheduleTx(ctx, tx, s); err != nil {
				return err
			}
			if state == StateBlocked {
				r, err := q.row(ctx, tx, p.id)
				if err != nil {
					return fmt.Errorf("read blocked job %s: %w", p.id, err)
				}
				if err := queueArrival(ctx, tx, r, "dependency", "", now); err != nil {
					return err
				}
			}
			depState[p.id] = state
			out[i] = Submitted{ID: p.id, State: state, RunAt: msTime(p.runAt), Reason: reason}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.Wake(Class)
	return out, nil
}

// runInput is the input each run of a job is admitted with — what
// governance checks and a permit shows: the job with the names of its
// environment variables but never their values.
func runInput(in JobInput, timeoutMS int64) json.RawMessage {
	env := map[string]string{}
	for k := range in.Env {
		env[k] = ""
	}
	raw, _ := json.Marshal(map[string]any{"job": machine.ExecInput{Command: in.Command, Args: nonNil(in.Args), Cwd: in.Cwd, Env: env, TimeoutMS: timeoutMS}})
	return raw
}

// validate checks one job and resolves its timeout, due time and
// dependencies. Existence of dependencies outside the batch is checked in
// the submit transaction, where a missing one blocks the job rather than
// refusing the submit.
func (q *Queue) validate(field string, in JobInput, now time.Time, n int, batch bool) (*planned, error) {
	p := &planned{in: in, field: field}
	if strings.TrimSpace(in.Command) == "" {
		return nil, invalid(field+".command", "must not be empty")
	}
	for k, v := range in.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, invalid(field+".env", "invalid variable name %q", k)
		}
		if strings.ContainsRune(v, 0) {
			return nil, invalid(field+".env."+k, "value contains NUL")
		}
	}
	switch {
	case in.TimeoutMS < 0:
		return nil, invalid(field+".timeout_ms", "must be positive")
	case in.TimeoutMS == 0:
		p.timeoutMS = q.DefaultTimeout.Milliseconds()
	case time.Duration(in.TimeoutMS)*time.Millisecond > q.MaxTimeout:
		return nil, invalid(field+".timeout_ms", "%d exceeds max_exec_timeout_ms (%d)", in.TimeoutMS, q.MaxTimeout.Milliseconds())
	default:
		p.timeoutMS = in.TimeoutMS
	}
	switch in.OnInterrupt {
	case "", OnInterruptRequeue, OnInterruptBlock:
	default:
		return nil, invalid(field+".on_interrupt", "%q is not one of requeue, block", in.OnInterrupt)
	}
	p.runAt = now.UnixMilli()
	switch {
	case in.DelayMS != nil && in.RunAt != "":
		return nil, invalid(field+".run_at", "give delay_ms or run_at, not both")
	case in.DelayMS != nil:
		d := time.Duration(*in.DelayMS) * time.Millisecond
		if *in.DelayMS < 0 || d > MaxDelay {
			return nil, invalid(field+".delay_ms", "must be between 0 and %d", MaxDelay.Milliseconds())
		}
		p.runAt = now.Add(d).UnixMilli()
	case in.RunAt != "":
		t, err := time.Parse(time.RFC3339Nano, in.RunAt)
		if err != nil {
			return nil, invalid(field+".run_at", "%q is not an RFC 3339 time such as 2030-01-02T15:04:05Z", in.RunAt)
		}
		if t.Sub(now) > MaxDelay {
			return nil, invalid(field+".run_at", "more than %d days ahead", int(MaxDelay.Hours()/24))
		}
		p.runAt = max(t.UnixMilli(), 0)
	}
	for i, raw := range in.Dependencies {
		df := fmt.Sprintf("%s.dependencies[%d]", field, i)
		raw = bytes.TrimSpace(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if !primitive.ValidID("job", s) {
				return nil, invalid(df, "%q is not a job id (job_…); futures cannot be dependencies", s)
			}
			p.extDeps = append(p.extDeps, s)
			continue
		}
		var idx int
		if json.Unmarshal(raw, &idx) != nil {
			return nil, invalid(df, "must be a job id string or, in jobs[], an integer index into jobs")
		}
		if !batch {
			return nil, invalid(df, "integer dependencies index into jobs[]; with job, name earlier jobs by id")
		}
		if idx < 0 || idx >= n {
			return nil, invalid(df, "index %d is outside jobs[0..%d]", idx, n-1)
		}
		p.batchDeps = append(p.batchDeps, idx)
	}
	return p, nil
}

// topoOrder returns the batch in an order where every job follows its
// batch dependencies, or an error naming the jobs on a cycle.
func topoOrder(plan []*planned) ([]int, error) {
	deps := make([][]int, len(plan))
	for i, p := range plan {
		deps[i] = p.batchDeps
	}
	order, stuck := dispatch.TopoOrder(deps)
	if stuck == nil {
		return order, nil
	}
	var cyc []string
	for _, i := range stuck {
		cyc = append(cyc, fmt.Sprintf("jobs[%d]", i))
	}
	if len(cyc) > 8 {
		cyc = append(cyc[:8], "…")
	}
	return nil, invalid("jobs", "dependency cycle (jobs on it or waiting on it: %s); nothing was submitted", strings.Join(cyc, ", "))
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
