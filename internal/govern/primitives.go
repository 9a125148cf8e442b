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

// Specs returns task.reconcile (close an UNKNOWN outcome after
// re-reading state), the model's governance primitive that touches no
// engine. The model's other one, machine.estop, also stops running work,
// so it is built beside the engines (internal/control).
func (g *Governor) Specs() []*primitive.Spec {
	return []*primitive.Spec{
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
