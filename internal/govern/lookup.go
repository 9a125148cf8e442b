package govern

import (
	"context"
	"fmt"
)

// Narrow reads of governance's tables for the operator's panel, which
// describes ledger entries by the calls they name; govern owns the
// commands and permits tables (docs/ARCHITECTURE.md, "Who owns which
// table").

// CommandCall returns the future command id ran as ("" when it has none)
// and its primitive.
func (g *Governor) CommandCall(ctx context.Context, commandID string) (future, prim string, err error) {
	if err := g.DB.R.QueryRowContext(ctx, `SELECT COALESCE(future_id, ''), primitive FROM commands WHERE command_id = ?`, commandID).Scan(&future, &prim); err != nil {
		return "", "", fmt.Errorf("read command %s: %w", commandID, err)
	}
	return future, prim, nil
}

// PermitCall returns the primitive and the exact input permit id asks for.
func (g *Governor) PermitCall(ctx context.Context, permitID string) (prim, input string, err error) {
	if err := g.DB.R.QueryRowContext(ctx, `SELECT primitive, input FROM permits WHERE id = ?`, permitID).Scan(&prim, &input); err != nil {
		return "", "", fmt.Errorf("read permit %s: %w", permitID, err)
	}
	return prim, input, nil
}
