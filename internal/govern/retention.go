package govern

import (
	"context"
	"database/sql"
	"fmt"
)

// LiveText is governance's part of artifact retention (an
// artifacts.LiveText, which internal/app registers): it passes to add, in
// tx, the input of every permit awaiting the operator, which may name an
// artifact the approved call will read.
func LiveText(ctx context.Context, tx *sql.Tx, _ int64, add func(text string)) error {
	if err := pendingInputs(ctx, tx, add); err != nil {
		return fmt.Errorf("read the pending permits: %w", err)
	}
	return nil
}
