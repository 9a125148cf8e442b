package govern

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/hearth-dev/hearth/internal/store"
)

// livePermits selects the input of every permit awaiting the operator,
// through the partial index of pending permits (migration 0006).
const livePermits = `SELECT p.input FROM permits p WHERE p.state = 'pending'`

// LiveText is governance's part of artifact retention (an
// artifacts.LiveText, which internal/app registers): it passes to add, in
// tx, the input of every permit awaiting the operator, which may name an
// artifact the approved call will read.
func LiveText(ctx context.Context, tx *sql.Tx, _ int64, add func(text string)) error {
	rows, err := tx.QueryContext(ctx, livePermits)
	if err := store.EachText(rows, err, add); err != nil {
		return fmt.Errorf("read the pending permits: %w", err)
	}
	return nil
}
