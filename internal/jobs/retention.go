package jobs

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/store"
)

// LiveText is the jobs' part of artifact retention (an
// artifacts.LiveText, which internal/app registers): it passes to add, in
// tx, the command line, environment and exec result of every job whose
// future has not finished (the engine says which), read by key.
func LiveText(ctx context.Context, tx *sql.Tx, _ int64, add func(text string)) error {
	ids, err := dispatch.Unfinished(ctx, tx, Class)
	if err != nil {
		return err
	}
	for _, id := range ids {
		rows, err := tx.QueryContext(ctx, `SELECT args, env, COALESCE(result, '') FROM jobs WHERE id = ?`, id)
		if err := store.EachText(rows, err, add); err != nil {
			return fmt.Errorf("read job %s: %w", id, err)
		}
	}
	return nil
}
