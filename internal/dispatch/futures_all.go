package dispatch

import "context"

// Route returns the conversation (route hash) the future belongs to.
func (f Future) Route() string { return f.route }

// ListAllFutures returns the futures of every conversation, newest first,
// without their results. It is for the operator's control panel, which
// sees all conversations; tools use ListFutures, scoped to their own.
func (d *Dispatcher) ListAllFutures(ctx context.Context, limit int) ([]Future, error) {
	return d.listFutures(ctx, "list all futures", "WHERE class IS NULL", limit)
}
