package jobs

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// Bounds of the task tool's own fields.
const (
	MaxWait      = 60 * time.Second
	DefaultWait  = 30 * time.Second
	MaxList      = 200
	DefaultList  = 20
	cancelBudget = 10 * time.Second
)

func jobFields() []primitive.Field {
	return []primitive.Field{
		{Name: "command", Type: primitive.TString, Required: true, Desc: "Program (path or name on PATH); never a shell string."},
		{Name: "args", Type: primitive.TArray, Items: &primitive.Field{Type: primitive.TString}, Desc: "Arguments, one per element."},
		{Name: "cwd", Type: primitive.TString, Desc: "Working directory (absolute)."},
		{Name: "env", Type: primitive.TObject, Values: primitive.TString, Desc: "Extra environment variables."},
		{Name: "timeout_ms", Type: primitive.TInteger, Min: primitive.Bound(1), Desc: "Kill the process tree after this many ms (default exec_timeout_ms)."},
		{Name: "delay_ms", Type: primitive.TInteger, Min: primitive.Bound(0), Max: primitive.Bound(float64(MaxDelay.Milliseconds())), Desc: "Start no earlier than this many ms from now."},
		{Name: "run_at", Type: primitive.TString, Desc: "Start no earlier than this RFC 3339 time (instead of delay_ms)."},
		{Name: "dependencies", Type: primitive.TArray, Items: &primitive.Field{Desc: "Job id string, or integer index into jobs[]."},
			Desc: "Jobs that must complete first: ids of earlier jobs or indexes into this jobs[]. If one fails, is cancelled or blocked, or is no job of this conversation, this job is blocked."},
		{Name: "on_interrupt", Type: primitive.TString, Enum: []string{OnInterruptRequeue, OnInterruptBlock},
			Desc: "If Hearth stops while it runs: requeue (default) or block with outcome unknown."},
	}
}

type submitInput struct {
	Job  *JobInput  `json:"job"`
	Jobs []JobInput `json:"jobs"`
}

type idInput struct {
	ID string `json:"id"`
}

type waitInput struct {
	ID        string `json:"id"`
	TimeoutMS *int64 `json:"timeout_ms"`
}

type listInput struct {
	Limit int `json:"limit"`
}

// Specs returns the task tool's primitives. All answer inline: submit
// returns ids at once, wait is bounded, and the rest only read or flip
// state. Those that also report generic futures receive the dispatcher
// running them with each call (dispatch.WithEngine).
func (q *Queue) Specs() []*primitive.Spec {
	idField := primitive.Field{Name: "id", Type: primitive.TString, Required: true, Desc: "Job id (job_…) or future id (fut_…) of this conversation."}
	return []*primitive.Spec{
		{Tool: "task", Operation: "submit", Risk: primitive.RiskExec, Inline: true,
			Summary: "queue durable exec jobs (job, or jobs[] of up to 1000); returns ids at once; completions arrive later.",
			Fields: []primitive.Field{
				{Name: "job", Type: primitive.TObject, Fields: jobFields(), Desc: "One job {command, args?, cwd?, env?, timeout_ms?, delay_ms? | run_at?, dependencies?, on_interrupt?}."},
				{Name: "jobs", Type: primitive.TArray, Min: primitive.Bound(1), Max: primitive.Bound(MaxBatch),
					Items: &primitive.Field{Type: primitive.TObject, Fields: jobFields()}, Desc: "Several jobs, same shape as job, submitted atomically."},
			},
			Run: dispatch.WithEngine(q.submitOp)},
		{Tool: "task", Operation: "get", Risk: primitive.RiskRead, Inline: true, Fields: []primitive.Field{idField},
			Summary: "a job's or future's state and result.",
			Run:     dispatch.WithEngine(q.getOp)},
		{Tool: "task", Operation: "status", Risk: primitive.RiskRead, Inline: true, Fields: []primitive.Field{idField},
			Summary: "same as get.",
			Run:     dispatch.WithEngine(q.getOp)},
		{Tool: "task", Operation: "wait", Risk: primitive.RiskRead, Inline: true,
			Fields: []primitive.Field{idField,
				{Name: "timeout_ms", Type: primitive.TInteger, Min: primitive.Bound(0), Max: primitive.Bound(float64(MaxWait.Milliseconds())), Desc: "Longest wait (default 30000, max 60000)."}},
			Summary: "block until the job's state changes (queued → running, or it ends; at once if already ended), the future ends, or timeout_ms passes; then as get, plus timed_out. Wait again for a job's end.",
			Run:     dispatch.WithEngine(q.waitOp)},
		{Tool: "task", Operation: "cancel", Risk: primitive.RiskWrite, Inline: true, Fields: []primitive.Field{idField},
			Summary: "cancel a queued job or future atomically, or kill a running job's process tree; running generic futures cannot be cancelled safely.",
			Run:     dispatch.WithEngine(q.cancelOp)},
		{Tool: "task", Operation: "list", Risk: primitive.RiskRead, Inline: true,
			Fields:  []primitive.Field{{Name: "limit", Type: primitive.TInteger, Min: primitive.Bound(1), Max: primitive.Bound(MaxList), Desc: "Most items (default 20)."}},
			Summary: "this conversation's jobs and futures, newest first.",
			Run:     dispatch.WithEngine(q.listOp)},
	}
}

func (q *Queue) submitOp(ctx context.Context, e *dispatch.Dispatcher, call *primitive.Call, in submitInput) (any, error) {
	switch {
	case in.Job != nil && in.Jobs != nil:
		return nil, primitive.Failed("invalid_input", "task.submit: give job or jobs, not both")
	case in.Job != nil:
		out, err := q.SubmitFor(ctx, e, call.Route, call.CommandID, []JobInput{*in.Job}, false)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": out[0].ID, "ids": []string{out[0].ID}, "jobs": out}, nil
	case in.Jobs != nil:
		out, err := q.SubmitFor(ctx, e, call.Route, call.CommandID, in.Jobs, true)
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(out))
		for i, s := range out {
			ids[i] = s.ID
		}
		return map[string]any{"ids": ids, "jobs": out}, nil
	}
	return nil, primitive.Failed("invalid_input", "task.submit: field \"job\": give job (one object) or jobs (an array)")
}

func notFound(op, id string) error {
	return primitive.Failed("not_found", "task.%s: no job or future %q in this conversation", op, id)
}

// lookup reads a job or a future of route by id.
func (q *Queue) lookup(ctx context.Context, e *dispatch.Dispatcher, op, route, id string) (map[string]any, error) {
	switch {
	case strings.HasPrefix(id, "job_"):
		j, err := q.Get(ctx, route, id)
		if errors.Is(err, ErrNoJob) {
			return nil, notFound(op, id)
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{"job": j}, nil
	case strings.HasPrefix(id, "fut_"):
		f, err := e.GetFuture(ctx, route, id)
		if errors.Is(err, dispatch.ErrNoFuture) {
			return nil, notFound(op, id)
		}
		if err != nil {
			return nil, err
		}
		return map[string]any{"future": f}, nil
	}
	return nil, notFound(op, id)
}

func (q *Queue) getOp(ctx context.Context, e *dispatch.Dispatcher, call *primitive.Call, in idInput) (any, error) {
	return q.lookup(ctx, e, "get", call.Route, in.ID)
}

func (q *Queue) waitOp(ctx context.Context, e *dispatch.Dispatcher, call *primitive.Call, in waitInput) (any, error) {
	timeout := DefaultWait
	if in.TimeoutMS != nil {
		timeout = min(time.Duration(*in.TimeoutMS)*time.Millisecond, MaxWait)
	}
	start := time.Now()
	var out map[string]any
	var timedOut bool
	switch {
	case strings.HasPrefix(in.ID, "job_"):
		j, to, err := q.Wait(ctx, e, call.Route, in.ID, timeout)
		if errors.Is(err, ErrNoJob) {
			return nil, notFound("wait", in.ID)
		}
		if err != nil {
			return nil, err
		}
		out, timedOut = map[string]any{"job": j}, to
	case strings.HasPrefix(in.ID, "fut_"):
		f, to, err := q.waitFuture(ctx, e, call.Route, in.ID, timeout)
		if errors.Is(err, dispatch.ErrNoFuture) {
			return nil, notFound("wait", in.ID)
		}
		if err != nil {
			return nil, err
		}
		out, timedOut = map[string]any{"future": f}, to
	default:
		return nil, notFound("wait", in.ID)
	}
	out["timed_out"] = timedOut
	out["waited_ms"] = time.Since(start).Milliseconds()
	return out, nil
}

// waitFuture waits on the dispatcher's completion signal for a future.
func (q *Queue) waitFuture(ctx context.Context, e *dispatch.Dispatcher, route, id string, timeout time.Duration) (dispatch.Future, bool, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		ch, stop := e.Watch(id)
		f, err := e.GetFuture(ctx, route, id)
		if err != nil || dispatch.Settled(f.State) {
			stop()
			return f, false, err
		}
		select {
		case <-ch:
			continue
		case <-timer.C:
			stop()
			return f, true, nil
		case <-ctx.Done():
			stop()
			return f, true, nil
		}
	}
}

func (q *Queue) cancelOp(ctx context.Context, e *dispatch.Dispatcher, call *primitive.Call, in idInput) (any, error) {
	switch {
	case strings.HasPrefix(in.ID, "job_"):
		cctx, cancel := context.WithTimeout(ctx, cancelBudget)
		defer cancel()
		j, cancelled, err := q.Cancel(cctx, e, call.Route, in.ID)
		if errors.Is(err, ErrNoJob) {
			return nil, notFound("cancel", in.ID)
		}
		if err != nil {
			return nil, err
		}
		out := map[string]any{"job": j, "cancelled": cancelled}
		if !cancelled {
			out["note"] = "not cancelled: the job is already " + j.State
		}
		return out, nil
	case strings.HasPrefix(in.ID, "fut_"):
		f, err := e.CancelQueued(ctx, call.Route, in.ID)
		switch {
		case errors.Is(err, dispatch.ErrNoFuture):
			return nil, notFound("cancel", in.ID)
		case errors.Is(err, dispatch.ErrRunning):
			return nil, primitive.Blocked("not_cancellable", "task.cancel: future %s is already running; generic work cannot be cancelled safely (it may be half done). Use task.wait for its result.", in.ID).
				WithDetails(map[string]any{"future_id": in.ID, "state": f.State})
		case err != nil:
			return nil, err
		}
		out := map[string]any{"future": f, "cancelled": f.State == "cancelled"}
		if f.State != "cancelled" {
			out["note"] = "not cancelled: the future is already " + f.State
		}
		return out, nil
	}
	return nil, notFound("cancel", in.ID)
}

func (q *Queue) listOp(ctx context.Context, e *dispatch.Dispatcher, call *primitive.Call, in listInput) (any, error) {
	limit := in.Limit
	if limit <= 0 {
		limit = DefaultList
	}
	items, err := q.ListJobs(ctx, call.Route, limit)
	if err != nil {
		return nil, err
	}
	futs, err := e.ListFutures(ctx, call.Route, limit)
	if err != nil {
		return nil, err
	}
	for _, f := range futs {
		items = append(items, Summary{Kind: "future", ID: f.ID, State: f.State, Primitive: f.Primitive, Outcome: f.Outcome,
			CreatedAt: f.CreatedAt, FinishedAt: f.FinishedAt})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].CreatedAt.After(items[j].CreatedAt) })
	if len(items) > limit {
		items = items[:limit]
	}
	return map[string]any{"items": items, "count": len(items)}, nil
}
