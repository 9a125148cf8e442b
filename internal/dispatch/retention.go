package dispatch

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/hearth-dev/hearth/internal/store"
)

// liveQueries select the text of the engine's live rows that may name an
// artifact: an arrival its conversation has not acknowledged yet and that
// is not older than the limit (?1), an unfinished future (its input and
// result), and the stored result of a dependency a waiting future will
// read back ($future references). Each reads through an index, a partial
// one that holds only unfinished futures (migration 0010), so none of them
// reads the finished history.
var liveQueries = []string{
	`SELECT r.payload FROM arrivals r LEFT JOIN cursors c ON c.route = r.route
		WHERE r.created_at >= ?1 AND r.seq > COALESCE(c.acked_seq, 0)`,
	`SELECT f.input, COALESCE(f.result, '') FROM futures f WHERE f.finished_at IS NULL`,
	// CROSS JOIN keeps this order: from the few unfinished futures to their
	// dependencies, never through all of future_deps.
	`SELECT COALESCE(g.result, '') FROM futures f CROSS JOIN future_deps d ON d.future_id = f.id CROSS JOIN futures g ON g.id = d.dep_id
		WHERE f.finished_at IS NULL`,
}

// LiveText is the engine's part of artifact retention (an
// artifacts.LiveText, which internal/app registers): it passes to add, in
// tx, the text of every live row of futures, future_deps and arrivals
// that may name an artifact. arrivalsSince (Unix milliseconds) is the age
// from which an unacknowledged arrival still counts as alive.
func LiveText(ctx context.Context, tx *sql.Tx, arrivalsSince int64, add func(text string)) error {
	for i, q := range liveQueries {
		var args []any
		if i == 0 {
			args = append(args, arrivalsSince)
		}
		rows, err := tx.QueryContext(ctx, q, args...)
		if err := store.EachText(rows, err, add); err != nil {
			return fmt.Errorf("read the engine's live rows: %w", err)
		}
	}
	return nil
}

const unfinishedQuery = `SELECT id FROM futures WHERE finished_at IS NULL AND class = ?`

// Unfinished returns, in tx, the ids of class's futures that have not
// finished (read through the partial index of unfinished futures): a
// class that keeps rows of its own beside its futures (jobs) finds its
// live ones.
func Unfinished(ctx context.Context, tx *sql.Tx, class string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, unfinishedQuery, class)
	ids, err := store.Collect(rows, err, func(r *sql.Rows) (id string, err error) { return id, r.Scan(&id) })
	if err != nil {
		return nil, fmt.Errorf("find the unfinished %s futures: %w", class, err)
	}
	return ids, nil
}

// ArrivalsPruned counts what PruneArrivals deleted.
type ArrivalsPruned struct {
	Arrivals  int  `json:"arrivals"`
	Remaining bool `json:"remaining"` // stopped early (context done)
}

// LogValue logs the count.
func (r ArrivalsPruned) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("arrivals", r.Arrivals), slog.Bool("remaining", r.Remaining))
}

// arrivalsPruneBatch bounds the arrivals one statement deletes, so the single
// write connection is held for milliseconds at a time.
const arrivalsPruneBatch = 200

// PruneArrivals deletes the arrivals created before before that their
// conversation never acknowledged: such a conversation has made no request
// for that long, so it has been abandoned, and otherwise its last arrivals
// (and the artifacts they name) would be kept for ever. Retention runs it
// with the artifact age limit, just before the artifacts' pass.
//
// Arrival seqs come from an AUTOINCREMENT key and are never reused, so a
// cursor's acked and offered seqs stay valid: a later request acknowledges
// nothing it was not offered, and a retry of an offered batch is offered
// what is left of it. The arrival's work keeps its own row, so task get
// still reports it.
func (d *Dispatcher) PruneArrivals(ctx context.Context, before time.Time) (ArrivalsPruned, error) {
	var rep ArrivalsPruned
	for {
		if ctx.Err() != nil {
			rep.Remaining = true
			return rep, nil
		}
		res, err := d.DB.W.ExecContext(ctx, `DELETE FROM arrivals WHERE seq IN (
			SELECT seq FROM arrivals WHERE created_at < ? ORDER BY created_at LIMIT ?)`, before.UnixMilli(), arrivalsPruneBatch)
		if err != nil {
			return rep, fmt.Errorf("prune arrivals: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return rep, fmt.Errorf("prune arrivals: %w", err)
		}
		rep.Arrivals += int(n)
		if n < arrivalsPruneBatch {
			return rep, nil
		}
	}
}
