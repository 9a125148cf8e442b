package govern

import (
	"context"
	"path/filepath"
	"runtime"

	"github.com/hearth-dev/hearth/internal/primitive"
)

func isAbsPath(p string) bool {
	return filepath.IsAbs(p) || runtime.GOOS == "windows" && len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// Specs returns the model's two governance primitives: machine.estop (a
// trusted stop that needs no permit and works in every mode) and
// task.reconcile (close an UNKNOWN outcome after re-reading state).
func (g *Governor) Specs() []*primitive.Spec {
	return []*primitive.Spec{
		{Tool: "machine", Operation: "estop", Risk: primitive.RiskControl, Inline: true,
			Summary: "emergency stop: refuse every non-read call and kill running work until the human operator resets it. Always allowed.",
			Fields:  []primitive.Field{{Name: "reason", Type: primitive.TString, Desc: "Why the stop was triggered (shown to the operator)."}},
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in struct {
				Reason string `json:"reason"`
			}) (any, error) {
				if err := g.Latch(context.WithoutCancel(ctx), "model", in.Reason); err != nil {
					return nil, primitive.Failed("estop_failed", "%v", err)
				}
				return map[string]any{"latched": true, "reason": in.Reason, "reset": "only the operator can reset it (control panel or `hearth-tray safety reset`)"}, nil
			})},
		{Tool: "task", Operation: "reconcile", Risk: primitive.RiskControl, Inline: true,
			Summary: "close an UNKNOWN outcome (command id) after re-reading the state it may have changed; reopens this conversation's gate.",
			Fields: []primitive.Field{
				{Name: "id", Type: primitive.TString, Required: true, Desc: "Job, future or command id (get/status/wait/cancel: job_… or fut_…; reconcile: cmd_… from the blocked result)."},
				{Name: "observed", Type: primitive.TString, Required: true, Desc: "reconcile: what you observed when re-reading the state."},
			},
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in struct {
				ID       string `json:"id"`
				Observed string `json:"observed"`
			}) (any, error) {
				if err := g.reconcile(context.WithoutCancel(ctx), call.Route, in.ID, "model", in.Observed); err != nil {
					return nil, err
				}
				return map[string]any{"reconciled": in.ID}, nil
			})},
	}
}
