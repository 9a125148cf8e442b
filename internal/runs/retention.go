package runs

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/hearth-dev/hearth/internal/store"
)

// liveQueries select the text of an open run that may name an artifact:
// its checkpoint and its continuations' prompts, which a later
// conversation resumes from. They read through the partial index of open
// runs (migration 0010), never the closed history.
var liveQueries = []string{
	`SELECT r.objective, r.acceptance_criteria, r.summary, r.next_actions, r.pending_task_ids FROM runs r WHERE r.state = 'open'`,
	`SELECT c.prompt, COALESCE(c.command, '') FROM runs r JOIN continuations c ON c.run_id = r.id WHERE r.state = 'open'`,
}

// LiveText is the runs' part of artifact retention (an
// artifacts.LiveText, which internal/app registers): it passes to add, in
// tx, the text of every open run and its continuations.
func LiveText(ctx context.Context, tx *sql.Tx, _ int64, add func(text string)) error {
	for _, q := range liveQueries {
		rows, err := tx.QueryContext(ctx, q)
		if err := store.EachText(rows, err, add); err != nil {
			return fmt.Errorf("read the open runs: %w", err)
		}
	}
	return nil
}
