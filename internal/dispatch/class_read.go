package dispatch

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/hearth-dev/hearth/internal/callpath"
)

// Querier is where a class reads its futures: a transaction (a read-only
// one, for a consistent view of the future and the class's own row, or
// the write transaction the class is in), or the reader pool.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ClassFuture is one scheduled future as its class reads it (a class that
// keeps rows of its own beside its futures, such as jobs, reads the rest
// there). Times are Unix milliseconds.
type ClassFuture struct {
	ID            string
	Route         string
	State         string
	OnInterrupt   string
	Outcome       string
	Attempts      int
	Interruptions int
	RunAt         int64
	CreatedAt     int64
	StartedAt     sql.NullInt64
	FinishedAt    sql.NullInt64
	// StoppedBy says what stopped a cancelled future on purpose
	// (callpath.StoppedByKey of its answer), "" for anything else.
	StoppedBy string
}

// stoppedBySQL is a future's StoppedBy, read from its answer (result).
const stoppedBySQL = `CASE WHEN state = 'cancelled' AND json_valid(result)
	THEN COALESCE(json_extract(result, '$.error.details.` + callpath.StoppedByKey + `'), '') ELSE '' END`

const classFutureCols = `id, route, state, COALESCE(on_interrupt, 'requeue'), COALESCE(outcome, ''), attempts, interruptions,
	COALESCE(run_at, created_at), created_at, started_at, finished_at, ` + stoppedBySQL

func scanClassFuture(sc interface{ Scan(...any) error }) (ClassFuture, error) {
	var f ClassFuture
	err := sc.Scan(&f.ID, &f.Route, &f.State, &f.OnInterrupt, &f.Outcome, &f.Attempts, &f.Interruptions,
		&f.RunAt, &f.CreatedAt, &f.StartedAt, &f.FinishedAt, &f.StoppedBy)
	return f, err
}

// ClassFutureOf reads future id of class in q; sql.ErrNoRows when there
// is no such future of that class.
func ClassFutureOf(ctx context.Context, q Querier, class, id string) (ClassFuture, error) {
	return scanClassFuture(q.QueryRowContext(ctx, `SELECT `+classFutureCols+` FROM futures WHERE id = ? AND class = ?`, id, class))
}

// ClassFutures returns up to limit of class's futures, newest first: of
// route, or of every conversation when route is empty (the operator's
// panel).
func ClassFutures(ctx context.Context, q Querier, class, route string, limit int) ([]ClassFuture, error) {
	where, args := `class = ?`, []any{class}
	if route != "" {
		where, args = `route = ? AND class = ?`, []any{route, class}
	}
	rows, err := q.QueryContext(ctx, `SELECT `+classFutureCols+` FROM futures WHERE `+where+` ORDER BY created_at DESC, rowid DESC LIMIT ?`,
		append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("list %s futures: %w", class, err)
	}
	defer rows.Close()
	var out []ClassFuture
	for rows.Next() {
		f, err := scanClassFuture(rows)
		if err != nil {
			return nil, fmt.Errorf("list %s futures: %w", class, err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// DepsOf returns the futures future id depends on, in the order they were
// recorded.
func DepsOf(ctx context.Context, q Querier, id string) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT dep_id FROM future_deps WHERE future_id = ? ORDER BY rowid`, id)
	if err != nil {
		return nil, fmt.Errorf("read the dependencies of %s: %w", id, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			return nil, fmt.Errorf("read the dependencies of %s: %w", id, err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
