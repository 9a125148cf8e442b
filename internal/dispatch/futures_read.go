package dispatch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/hearth-dev/hearth/internal/store"
)

// The futures table's narrow reads for other parts: the panel's chat
// labels and call descriptions, and the storage budget. Dispatch owns the table (docs/ARCHITECTURE.md, "Who owns
// which table"); nothing else names it in SQL.

// ChatSeen returns when conversation route was first and last seen: the
// creation of its first future and the latest start or end of any. ok is
// false for a conversation with no futures.
func (d *Dispatcher) ChatSeen(ctx context.Context, route string) (first, last time.Time, ok bool, err error) {
	var f, l sql.NullInt64
	err = d.DB.R.QueryRowContext(ctx,
		`SELECT MIN(created_at), MAX(COALESCE(finished_at, started_at, created_at)) FROM futures WHERE route = ?`, route).Scan(&f, &l)
	if err != nil {
		return time.Time{}, time.Time{}, false, fmt.Errorf("read when chat %s was seen: %w", route, err)
	}
	if !f.Valid {
		return time.Time{}, time.Time{}, false, nil
	}
	return time.UnixMilli(f.Int64), time.UnixMilli(l.Int64), true, nil
}

// CallOf returns the conversation, primitive and stored input of future
// id, of any conversation: for the operator's panel, which sees them all.
// An unknown id is ErrNoFuture.
func (d *Dispatcher) CallOf(ctx context.Context, id string) (route, prim, input string, err error) {
	err = d.DB.R.QueryRowContext(ctx, `SELECT route, primitive, input FROM futures WHERE id = ?`, id).Scan(&route, &prim, &input)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", "", fmt.Errorf("%w: %s", ErrNoFuture, id)
	}
	if err != nil {
		return "", "", "", fmt.Errorf("read future %s: %w", id, err)
	}
	return route, prim, input, nil
}

// DropFinishedInputs empties, in one bounded pass (up to 1000 futures),
// the stored input of finished futures larger than kept bytes, and
// returns how many it emptied. A future's input is read only to run it;
// once it has finished nothing reads it again (results are reported from
// the result, replays compare input_sha256).
func (d *Dispatcher) DropFinishedInputs(ctx context.Context, kept int) (int, error) {
	n, err := emptyFinishedInputs(ctx, alone(d.DB), kept)
	if err != nil {
		return 0, fmt.Errorf("drop the inputs of finished futures: %w", err)
	}
	return int(n), nil
}

// Undelivered returns how many terminal arrivals conversation route has
// that no response has offered yet, and when the newest of them arrived
// (the waker's question; dispatch owns arrivals and cursors). It reads
// through db alone, so a part built before the dispatcher can ask it.
func Undelivered(ctx context.Context, db *store.DB, route string) (int, time.Time, error) {
	var n int
	var newest int64
	err := db.R.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(a.created_at), 0) FROM arrivals a
		WHERE a.route = ?1 AND a.seq > COALESCE((SELECT offered_seq FROM cursors WHERE route = ?1), 0)
		AND COALESCE(json_extract(a.payload, '$.state'), '') NOT IN ('pending', 'queued', 'running')`, route).Scan(&n, &newest)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("count undelivered arrivals: %w", err)
	}
	return n, time.UnixMilli(newest), nil
}
