package runs

import (
	"context"
	"errors"

	"github.com/hearth-dev/hearth/internal/primitive"
)

func strList(name, desc string) primitive.Field {
	return primitive.Field{Name: name, Type: primitive.TArray, Max: primitive.Bound(MaxListItems), Items: &primitive.Field{Type: primitive.TString}, Desc: desc}
}

type idInput struct {
	ID string `json:"id"`
}

type listInput struct {
	Limit int    `json:"limit"`
	State string `json:"state"`
}

type closeInput struct {
	ID      string  `json:"id"`
	Summary *string `json:"summary"`
}

type eventsInput struct {
	Limit    int    `json:"limit"`
	EntityID string `json:"entity_id"`
}

// Specs returns the run tool's primitives except scatter (ScatterSpec,
// built from the registry of every other primitive).
func (s *Service) Specs() []*primitive.Spec {
	id := func(req bool) primitive.Field {
		return primitive.Field{Name: "id", Type: primitive.TString, Required: req,
			Desc: "Run id (run_...): checkpoint updates that run (omit to create one); get/close. Continuation id (cnt_...) for continuation_status."}
	}
	limit := primitive.Field{Name: "limit", Type: primitive.TInteger, Min: primitive.Bound(1), Max: primitive.Bound(MaxEvents), Desc: "list: most runs (default 20, max 200); events: most events (default 50, max 500)."}
	summary := primitive.Field{Name: "summary", Type: primitive.TString, Desc: "Where the work stands (checkpoint); final summary (close)."}
	return []*primitive.Spec{
		{Tool: "run", Operation: "checkpoint", Risk: primitive.RiskWrite, Inline: true,
			Summary: "create a durable run (objective required) or, with id, update an open one; fields given replace the stored ones.",
			Fields: []primitive.Field{id(false),
				{Name: "objective", Type: primitive.TString, Desc: "What the run is for (required to create)."},
				strList("acceptance_criteria", "How to tell the objective is met."),
				summary,
				strList("next_actions", "What to do next."),
				strList("pending_task_ids", "Job/future ids the run waits on."),
			},
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in CheckpointInput) (any, error) {
				return s.Checkpoint(ctx, call.Route, in)
			})},
		{Tool: "run", Operation: "list", Risk: primitive.RiskRead, Inline: true,
			Summary: "runs, most recently updated first.",
			Fields: []primitive.Field{limit,
				{Name: "state", Type: primitive.TString, Enum: []string{"open", "closed"}, Desc: "Only runs in this state."}},
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in listInput) (any, error) {
				if in.Limit == 0 {
					in.Limit = 20
				}
				rs, err := s.List(ctx, in.State, min(in.Limit, MaxRunsList))
				if err != nil {
					return nil, err
				}
				return map[string]any{"runs": rs}, nil
			})},
		{Tool: "run", Operation: "get", Risk: primitive.RiskRead, Inline: true, Fields: []primitive.Field{id(true)},
			Summary: "a run with its latest checkpoint and this conversation's continuations.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in idInput) (any, error) {
				r, err := s.Get(ctx, call.Route, in.ID)
				if errors.Is(err, ErrNoRun) {
					return nil, notFound("get", in.ID)
				}
				return r, err
			})},
		{Tool: "run", Operation: "close", Risk: primitive.RiskWrite, Inline: true, Fields: []primitive.Field{id(true), summary},
			Summary: "close an open run.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in closeInput) (any, error) {
				return s.Close(ctx, call.Route, in.ID, in.Summary)
			})},
		{Tool: "run", Operation: "events", Risk: primitive.RiskRead, Inline: true,
			Fields:  []primitive.Field{limit, {Name: "entity_id", Type: primitive.TString, Desc: "Only events of this run, recipe or scatter id."}},
			Summary: "the append-only event log (runs, continuations, recipes, this conversation's scatters), oldest first.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in eventsInput) (any, error) {
				if in.Limit == 0 {
					in.Limit = 50
				}
				evs, err := s.Events.List(ctx, call.Route, in.EntityID, in.Limit)
				if err != nil {
					return nil, err
				}
				return map[string]any{"events": evs}, nil
			})},
		{Tool: "run", Operation: "schedule_continuation", Risk: primitive.RiskWrite, Inline: true,
			Fields: []primitive.Field{
				{Name: "run_id", Type: primitive.TString, Required: true, Desc: "The open run to continue."},
				{Name: "prompt", Type: primitive.TString, Required: true, Desc: "What to say when continuing."},
				{Name: "delay_ms", Type: primitive.TInteger, Min: primitive.Bound(0), Max: primitive.Bound(float64(MaxDelay.Milliseconds())), Desc: "Due this many ms from now (default now)."},
				{Name: "run_at", Type: primitive.TString, Desc: "Due at this RFC 3339 time (instead of delay_ms)."},
				{Name: "target", Type: primitive.TObject, Desc: "Where to continue: {session} or {browser_tab}. Without one a due continuation is blocked.",
					Fields: []primitive.Field{{Name: "session", Type: primitive.TString, Desc: "Oracle session name."}, {Name: "browser_tab", Type: primitive.TString, Desc: "\"bound\": this conversation's tab in Hearth's ChatGPT window (or its target id or /c/ URL); woken with the prompt when wake is armed."}}},
			},
			Summary: "record a continuation; when due: no target → blocked; {browser_tab} with wake armed → typed into this conversation's bound tab (woken); else a dry-run command (oracle.armed false, the default) or a built but unrun command.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in ScheduleInput) (any, error) {
				return s.Schedule(ctx, call.Route, in)
			})},
		{Tool: "run", Operation: "continuation_status", Risk: primitive.RiskRead, Inline: true, Fields: []primitive.Field{id(true)},
			Summary: "one of this conversation's continuations: state (scheduled, blocked, dry_run, ready, woken) and its command; executed is true only when woken.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in idInput) (any, error) {
				return s.Continuation(ctx, call.Route, in.ID)
			})},
	}
}
