package control

import (
	"context"
	"fmt"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// A reconcile is one act in two parts, like the e-stop: governance closes
// the UNKNOWN (its conversation's gate opens), and the engine carries out
// what that leaves for the durable jobs the UNKNOWN held
// (dispatch.StateHeld): they run now, or, when the reconcile says so, they
// are cancelled.

// Held-job outcomes a reconcile may name (task.reconcile "held").
const (
	HeldRun    = "run"
	HeldCancel = "cancel"
)

// ReconcileSpec is task.reconcile, the model's close of an UNKNOWN
// outcome after re-reading the state it may have changed. It closes the
// UNKNOWN through gov and releases (or cancels) the conversation's jobs
// held for it through the dispatcher running the call.
func ReconcileSpec(gov *govern.Governor) *primitive.Spec {
	return &primitive.Spec{Tool: "task", Operation: "reconcile", Risk: primitive.RiskControl, Inline: true,
		Summary: "close an UNKNOWN outcome (command id) after re-reading the state it may have changed; reopens this conversation's gate and runs (or cancels) the jobs it held.",
		Fields: []primitive.Field{
			{Name: "id", Type: primitive.TString, Required: true, Desc: "Job, future or command id (get/status/wait/cancel: job_… or fut_…; reconcile: cmd_… from the blocked result)."},
			{Name: "observed", Type: primitive.TString, Required: true, Desc: "reconcile: what you observed when re-reading the state."},
			{Name: "held", Type: primitive.TString, Enum: []string{HeldRun, HeldCancel}, Desc: "reconcile: jobs held by the UNKNOWN: run them (default) or cancel them."},
		},
		Run: dispatch.WithEngine(func(ctx context.Context, e *dispatch.Dispatcher, call *primitive.Call, in struct {
			ID       string `json:"id"`
			Observed string `json:"observed"`
			Held     string `json:"held"`
		}) (any, error) {
			ctx = context.WithoutCancel(ctx)
			if err := gov.ReconcileAs(ctx, call.Route, in.ID, in.Observed); err != nil {
				return nil, err
			}
			out := map[string]any{"reconciled": in.ID}
			if in.Held == HeldCancel {
				ids, err := e.CancelHeld(ctx, call.Route, fmt.Sprintf("cancelled by the reconcile of UNKNOWN %s (held: cancel)", in.ID))
				if err != nil {
					return nil, primitive.Failed("release_failed", "task.reconcile: %s is reconciled, but the jobs it held could not all be cancelled; cancel them with task.cancel", in.ID).
						WithDetails(map[string]any{"cancelled": ids, "system_error": err.Error()})
				}
				out["held_jobs_cancelled"] = nonNil(ids)
				return out, nil
			}
			if _, err := e.ReleaseHeld(ctx); err != nil {
				return nil, primitive.Failed("release_failed", "task.reconcile: %s is reconciled, but the jobs it held could not be released yet; they are released at Hearth's next start", in.ID).
					WithDetails(map[string]any{"system_error": err.Error()})
			}
			out["held_jobs"] = "released: each runs now, unless another open UNKNOWN of this conversation still holds it"
			return out, nil
		})}
}

func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}
