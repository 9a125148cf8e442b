package dispatch

import (
	"context"
	"fmt"
)

// reofferAfterRestart forgets, for every conversation, which batch of
// arrivals was offered last: the answer that carried it may have died with
// the previous process (a crash after the offer was recorded but before
// the response was written), and the next distinct request would then
// acknowledge arrivals its client never saw. So after a start the last
// batch is offered again: delivery stays at-least-once, a client may see
// an arrival twice (the same future_id and seq) but never miss one.
func (d *Dispatcher) reofferAfterRestart(ctx context.Context) error {
	if _, err := d.DB.W.ExecContext(ctx, `UPDATE cursors SET offered_seq = acked_seq, offered_fp = '' WHERE offered_seq <> acked_seq`); err != nil {
		return fmt.Errorf("re-offer the arrivals of the last answers: %w", err)
	}
	return nil
}
