package govern

import (
	"context"
	"fmt"

	"github.com/hearth-dev/hearth/internal/callpath"
)

// Scheduled futures (durable jobs) are admitted when each attempt starts,
// by the same Admit as every call: a run may start long after its submit,
// after the operator tightened the policy, removed an allow-rule, latched
// the e-stop, or a call of the conversation ended UNKNOWN. The named
// differences (callpath.Admission.Scheduled) are decided here:
//   - a submit the operator approved covers its jobs' runs (the operator
//     saw each job), and so does an approved permit of the attempt's own
//     command id and input (the permit the attempt parked for);
//   - an UNKNOWN opened by a future of the same submit (the interruption
//     of an on_interrupt "block" job opens one) does not refuse it.

// scheduledApproved reports whether the operator approved the attempt a
// (a permit of its own command id and input) or the command that queued
// it.
func (g *Governor) scheduledApproved(ctx context.Context, a *callpath.Admission) (bool, error) {
	ok, err := g.approvedCommand(ctx, a.CommandID, a.Digest, a.Parent)
	if err != nil {
		return false, fmt.Errorf("look up the approval of %s: %w", a.FutureID, err)
	}
	return ok, nil
}
