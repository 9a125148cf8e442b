package control

import "context"

// SeenLowered marks the lowered safety settings announced up to ledger
// entry through as seen by operator (the panel banner's Seen).
func (o *Operator) SeenLowered(ctx context.Context, operator string, through int64) error {
	return o.rec.SeenLowered(ctx, operator, through)
}
