package control

import (
	"context"

	"github.com/hearth-dev/hearth/internal/govern"
)

// AddWorkspace records the operator's workspace offered by permit p's
// card (govern.Decisions.AddWorkspace): it only changes what later calls
// need, so nothing running or parked is touched. Refused while the
// e-stop is latched (govern.ErrEStopLatched).
func (o *Operator) AddWorkspace(ctx context.Context, operator string, p govern.Permit, folder string) (govern.Workspace, error) {
	return o.rec.AddWorkspace(ctx, operator, p, folder)
}

// ApproveWorkspace adds the workspace permit p's card offered and approves
// p once, both or neither (govern.Decisions.ApproveWorkspace), then releases
// the parked work.
func (o *Operator) ApproveWorkspace(ctx context.Context, operator string, p govern.Permit, folder string) (govern.Workspace, error) {
	d, r, err := o.rec.ApproveWorkspace(ctx, operator, p, folder)
	if err != nil {
		return govern.Workspace{}, err
	}
	return r, o.carryOut(ctx, d)
}

// RemoveWorkspace removes a workspace.
func (o *Operator) RemoveWorkspace(ctx context.Context, operator, id string) error {
	return o.rec.RemoveWorkspace(ctx, operator, id)
}
