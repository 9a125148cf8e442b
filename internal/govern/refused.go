package govern

import (
	"context"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// KindRefused is the ledger entry of a call refused before it started
// because the emergency stop was on: nothing ran, so it has no intent or
// outcome, and without this entry the ledger (and its page, which says
// everything ChatGPT did is written there) would leave it out.
const KindRefused = "refused"

// refuseUnderEStop journals a's refusal under the e-stop (what was asked,
// as the intent would name it, never its input) and returns the blocked
// answer. An attempt of a scheduled future is admitted inside the
// dispatcher's claim, a write transaction of its own, so it is not
// journaled here (its future settles blocked, which the Tasks page
// shows). A failed journal write is logged; the call is refused either
// way.
func (g *Governor) refuseUnderEStop(ctx context.Context, a *callpath.Admission, reason string) error {
	blocked := primitive.Blocked("estop", "emergency stop is latched (%s); %s refused. Only the operator can reset it.", reason, a.Spec.Name())
	if a.Scheduled {
		return blocked
	}
	_, err := g.Ledger.Append(ctx, KindRefused, map[string]any{
		"command_id": a.CommandID, "primitive": a.Spec.Name(), "route": a.Route,
		"input_sha256": a.Digest, "future_id": a.FutureID, "reason": "estop",
	})
	if err != nil && g.Log != nil {
		g.Log.Warn("govern: journal a call refused under the e-stop", "primitive", a.Spec.Name(), "err", err)
	}
	return blocked
}
