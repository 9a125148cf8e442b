package dispatch

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/store"
)

// FutureReader reads the engine's futures for governance (it implements
// callpath.Futures). It needs only the database, so the governor can be
// built with it before the dispatcher, which is built over the governor.
type FutureReader struct{ db *store.DB }

// NewFutureReader returns the reader of db's futures.
func NewFutureReader(db *store.DB) (*FutureReader, error) {
	if db == nil {
		return nil, errors.New("build the future reader: the database is required")
	}
	return &FutureReader{db: db}, nil
}

const futureViewCols = `id, route, primitive, input_sha256, input, state, result, COALESCE(class, ''), COALESCE(on_interrupt, ''), COALESCE(attempts, 0), parent`

func scanFutureView(sc interface{ Scan(...any) error }) (callpath.FutureView, error) {
	var f callpath.FutureView
	err := sc.Scan(&f.ID, &f.Route, &f.Primitive, &f.InputSHA256, &f.Input, &f.State, &f.Result, &f.Class, &f.OnInterrupt, &f.Attempts, &f.Parent)
	return f, err
}

// Future implements callpath.Futures; a replay waiting for a call's
// future asks it every few milliseconds, so it reads through a prepared
// statement.
func (r *FutureReader) Future(ctx context.Context, id string) (callpath.FutureView, bool, error) {
	return r.one(ctx, `SELECT `+futureViewCols+` FROM futures WHERE id = ?`, id)
}

// futureOfCommandQuery reads the first future of a command id; a replay
// asks it on every retried call, so it reads through futures_command.
const futureOfCommandQuery = `SELECT ` + futureViewCols + ` FROM futures WHERE command_id = ? ORDER BY created_at, rowid LIMIT 1`

// FutureOfCommand implements callpath.Futures.
func (r *FutureReader) FutureOfCommand(ctx context.Context, commandID string) (callpath.FutureView, bool, error) {
	return r.one(ctx, futureOfCommandQuery, commandID)
}

func (r *FutureReader) one(ctx context.Context, query, arg string) (callpath.FutureView, bool, error) {
	st, err := r.db.ReadStmt(ctx, query)
	if err != nil {
		return callpath.FutureView{}, false, err
	}
	f, err := scanFutureView(st.QueryRowContext(ctx, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return callpath.FutureView{}, false, nil
	}
	if err != nil {
		return callpath.FutureView{}, false, fmt.Errorf("read future %s: %w", arg, err)
	}
	return f, true, nil
}

// ParkedFutures implements callpath.Futures.
func (r *FutureReader) ParkedFutures(ctx context.Context) ([]callpath.FutureView, error) {
	rows, err := r.db.R.QueryContext(ctx, `SELECT `+futureViewCols+` FROM futures WHERE state = 'permit'`)
	fs, err := store.Collect(rows, err, func(r *sql.Rows) (callpath.FutureView, error) { return scanFutureView(r) })
	if err != nil {
		return nil, fmt.Errorf("find the futures parked for a permit: %w", err)
	}
	return fs, nil
}
