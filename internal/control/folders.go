package control

import (
	"context"

	"github.com/hearth-dev/hearth/internal/govern"
)

// AddFolderRule records the operator's folder rule offered by permit p's
// card (govern.Decisions.AddFolderRule): it only changes what later calls
// need, so nothing running or parked is touched. Refused while the
// e-stop is latched (govern.ErrEStopLatched).
func (o *Operator) AddFolderRule(ctx context.Context, operator string, p govern.Permit, folder string) (govern.FolderRule, error) {
	return o.rec.AddFolderRule(ctx, operator, p, folder)
}

// ApproveFolder adds the folder rule permit p's card offered and approves
// p once, both or neither (govern.Decisions.ApproveFolder), then releases
// the parked work.
func (o *Operator) ApproveFolder(ctx context.Context, operator string, p govern.Permit, folder string) (govern.FolderRule, error) {
	d, r, err := o.rec.ApproveFolder(ctx, operator, p, folder)
	if err != nil {
		return govern.FolderRule{}, err
	}
	return r, o.carryOut(ctx, d)
}

// RemoveFolderRule removes a folder rule.
func (o *Operator) RemoveFolderRule(ctx context.Context, operator, id string) error {
	return o.rec.RemoveFolderRule(ctx, operator, id)
}
