package control

import (
	"context"

	"github.com/hearth-dev/hearth/internal/govern"
)

// AddFolderRule records the operator's folder rule offered by permit p's
// card (govern.Operator.AddFolderRule): it only changes what later calls
// need, so nothing running or parked is touched.
func (o *Operator) AddFolderRule(ctx context.Context, operator string, p govern.Permit, folder string) (govern.FolderRule, error) {
	return o.rec.AddFolderRule(ctx, operator, p, folder)
}

// RemoveFolderRule removes a folder rule.
func (o *Operator) RemoveFolderRule(ctx context.Context, operator, id string) error {
	return o.rec.RemoveFolderRule(ctx, operator, id)
}
