package recipes

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/runs"
)

// StepTrace is what a run records of one step.
type StepTrace struct {
	Index       int       `json:"index"`
	Primitive   string    `json:"primitive"`
	InputSHA256 string    `json:"input_sha256"`
	State       string    `json:"state"`
	StartedAt   time.Time `json:"started_at"`
	DurationMS  int64     `json:"duration_ms"`
	FutureID    string    `json:"future_id,omitempty"`
	ErrorCode   string    `json:"error_code,omitempty"`
	Error       string    `json:"error,omitempty"`
}

// StepResult is a step's trace with its result, as recipe.run answers.
type StepResult struct {
	StepTrace
	Result any `json:"result,omitempty"`
}

// RunInput is recipe.run's input.
type RunInput struct {
	Name   string            `json:"name"`
	Params map[string]string `json:"params"`
}

// Run runs a recipe's steps in order through e, the dispatcher running
// recipe.run (each step is governed like any call: gates, e-stop,
// permits, journal), stopping at the first step that does not complete.
// machine.exec steps that exit non-zero or time out count as failed. A
// step parked for an operator permit is waited for.
func (b *Book) Run(ctx context.Context, e *dispatch.Dispatcher, call *primitive.Call, in RunInput) (any, error) {
	r, err := b.Get(ctx, in.Name)
	if errors.Is(err, ErrNoRecipe) {
		return nil, notFound("run", in.Name)
	}
	if err != nil {
		return nil, err
	}
	if len(r.Steps) > b.MaxSteps {
		return nil, primitive.Blocked("too_many_steps", "recipe.run: recipe %q has %d steps; recipe_max_steps is %d", r.Name, len(r.Steps), b.MaxSteps)
	}
	inputs, err := b.expandSteps(r, in.Params)
	if err != nil {
		return nil, err
	}
	runID := primitive.NewID("rrn")
	nctx := dispatch.WithNested(ctx)
	started := time.Now()
	steps := make([]StepResult, 0, len(r.Steps))
	var failure *primitive.Error
	for i, st := range r.Steps {
		spec := b.steps[st.Primitive]
		sum := sha256.Sum256(inputs[i])
		sr := StepResult{StepTrace: StepTrace{Index: i, Primitive: st.Primitive, InputSHA256: hex.EncodeToString(sum[:]), StartedAt: time.Now().UTC()}}
		var env *dispatch.Envelope
		if spec == nil {
			env = dispatch.ErrorEnvelope(st.Primitive, primitive.Blocked("unknown_primitive", "step primitive %s is not available", st.Primitive))
		} else {
			req := dispatch.Request{Route: call.Route, Spec: spec, Input: inputs[i], CommandID: dispatch.ChildCommandID(call.CommandID, "step", i)}
			env = e.Invoke(nctx, req, "")
			if env.State == primitive.StatePending && env.FutureID != "" {
				sr.FutureID = env.FutureID
				env = b.await(ctx, e, call.Route, env)
			}
		}
		sr.DurationMS = time.Since(sr.StartedAt).Milliseconds()
		sr.State = env.State
		sr.Result = env.Result
		if env.Error != nil {
			sr.ErrorCode, sr.Error = env.Error.Code, env.Error.Message
		} else if code, msg := execFailure(st.Primitive, env.Result); code != "" {
			sr.State, sr.ErrorCode, sr.Error = primitive.StateFailed, code, msg
		}
		steps = append(steps, sr)
		if sr.State != primitive.StateCompleted {
			failure = &primitive.Error{State: sr.State, Code: "step_failed",
				Message: fmt.Sprintf("recipe %q stopped at step %d (%s): %s", r.Name, i, st.Primitive, sr.Error)}
			break
		}
	}
	state := primitive.StateCompleted
	var failed any
	if failure != nil {
		state = failure.State
		failed = len(steps) - 1
	}
	trace := make([]StepTrace, len(steps))
	for i, s := range steps {
		trace[i] = s.StepTrace
	}
	if err := b.record(ctx, runID, r, call.Route, state, failed, trace, started); err != nil {
		b.Log.Error("record recipe run", "recipe", r.Name, "err", err)
	}
	out := map[string]any{"run_id": runID, "recipe": r.Name, "state": state, "steps": steps}
	if failure != nil {
		out["failed_step"] = failed
		return nil, failure.WithDetails(out)
	}
	return out, nil
}

// expandSteps substitutes params into every step input and validates the
// result against its primitive. Every placeholder needs a parameter and
// every parameter must be used.
func (b *Book) expandSteps(r *Recipe, params map[string]string) ([]json.RawMessage, error) {
	used := map[string]bool{}
	for _, p := range r.Params {
		used[p] = true
	}
	var unknown []string
	for k, v := range params {
		if !used[k] {
			unknown = append(unknown, k)
		}
		if len(v) > MaxParamBytes {
			return nil, primitive.Failed("invalid_input", "recipe.run: field \"params.%s\": at most %d bytes", k, MaxParamBytes)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		takes := "no parameters"
		if len(r.Params) > 0 {
			takes = "parameters " + strings.Join(r.Params, ", ")
		}
		return nil, primitive.Failed("invalid_input", "recipe.run: field \"params.%s\": recipe %q does not use it (it takes %s)", unknown[0], r.Name, takes)
	}
	out := make([]json.RawMessage, len(r.Steps))
	for i, st := range r.Steps {
		v, err := dispatch.DecodeJSON(st.Input)
		if err != nil {
			return nil, primitive.Failed("invalid_input", "recipe.run: stored steps[%d].input: %v", i, err)
		}
		// A recipe stored before placeholders were refused in code is
		// refused here, before any value is substituted.
		if err := checkCodePlaceholders("run", st.Primitive, v, fmt.Sprintf("steps[%d].input", i)); err != nil {
			return nil, err
		}
		nv, err := walkStrings(v, fmt.Sprintf("steps[%d].input", i), func(at, s string) (string, error) {
			return expand(s, func(name string) (string, error) {
				val, ok := params[name]
				if !ok {
					return "", primitive.Failed("invalid_input", "recipe.run: parameter %q is missing (used by %s of recipe %q)", name, at, r.Name)
				}
				return val, nil
			})
		})
		if err != nil {
			var pe *primitive.Error
			if errors.As(err, &pe) {
				return nil, pe
			}
			return nil, primitive.Failed("invalid_input", "recipe.run: %v", err)
		}
		raw, err := json.Marshal(nv)
		if err != nil {
			return nil, err
		}
		if spec := b.steps[st.Primitive]; spec != nil {
			if err := validateStep(spec, raw); err != nil {
				return nil, primitive.Failed("invalid_input", "recipe.run: steps[%d].input after substitution: %v", i, err)
			}
		}
		out[i] = raw
	}
	return out, nil
}

// await waits for a step parked as a future (an operator permit) to
// settle and returns its stored envelope.
func (b *Book) await(ctx context.Context, e *dispatch.Dispatcher, route string, env *dispatch.Envelope) *dispatch.Envelope {
	id := env.FutureID
	for {
		ch, stop := e.Watch(id)
		f, err := e.GetFuture(ctx, route, id)
		if err != nil {
			stop()
			return dispatch.ErrorEnvelope(env.Primitive, primitive.Failed("internal", "read step future %s: %v", id, err))
		}
		if dispatch.Settled(f.State) {
			stop()
			var out dispatch.Envelope
			if err := json.Unmarshal(f.Result, &out); err != nil {
				return dispatch.ErrorEnvelope(env.Primitive, primitive.Failed("internal", "decode step future %s: %v", id, err))
			}
			return &out
		}
		select {
		case <-ch:
		case <-ctx.Done():
			stop()
			return dispatch.ErrorEnvelope(env.Primitive, primitive.Blocked("cancelled",
				"stopped while step future %s waited (%s); it may still run once approved", id, f.State))
		}
	}
}

// execFailure reports a machine.exec result that did not succeed.
func execFailure(prim string, result any) (code, msg string) {
	if prim != "machine.exec" || result == nil {
		return "", ""
	}
	b, err := json.Marshal(result)
	if err != nil {
		return "", ""
	}
	var r struct {
		ExitCode int  `json:"exit_code"`
		TimedOut bool `json:"timed_out"`
	}
	if json.Unmarshal(b, &r) != nil {
		return "", ""
	}
	switch {
	case r.TimedOut:
		return "timed_out", "machine.exec timed out"
	case r.ExitCode != 0:
		return "exit_status", fmt.Sprintf("machine.exec exited with code %d", r.ExitCode)
	}
	return "", ""
}

func (b *Book) record(ctx context.Context, runID string, r *Recipe, route, state string, failed any, trace []StepTrace, started time.Time) error {
	tj, err := json.Marshal(trace)
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	now := time.Now()
	return b.DB.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO recipe_runs(id, recipe_id, recipe_name, route, state, failed_step, trace, started_at, finished_at)
			VALUES (?,?,?,?,?,?,?,?,?)`, runID, r.ID, r.Name, route, state, failed, string(tj), started.UnixMilli(), now.UnixMilli()); err != nil {
			return err
		}
		return runs.AppendTx(ctx, tx, "", runs.KindRecipeRun, r.ID, map[string]any{
			"run_id": runID, "name": r.Name, "state": state, "failed_step": failed, "steps": len(trace), "duration_ms": now.Sub(started).Milliseconds()})
	})
}
