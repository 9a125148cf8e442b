package govern

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// ErrNoRecord is returned for a command or permit that is not in the
// conversation's scope: another conversation's is reported exactly like
// one that does not exist.
var ErrNoRecord = errors.New("no such record in this conversation")

// RecordKey places a command or permit in a conversation's newest-first
// list: its creation time (Unix milliseconds) and its id.
type RecordKey struct {
	At int64
	ID string
}

// Record is one command or permit as a conversation's list shows it.
type Record struct {
	Key       RecordKey
	Primitive string
	State     string
}

// ListCommands returns up to limit of route's commands (every anonymous
// route's, for an anonymous one), newest first, after after (nil: from
// the newest). The evidence resources list them.
func (g *Governor) ListCommands(ctx context.Context, route string, after *RecordKey, limit int) ([]Record, error) {
	return g.listRecords(ctx, `SELECT command_id, created_at, primitive, state FROM commands`, "command_id", route, after, limit)
}

func (g *Governor) listRecords(ctx context.Context, query, idCol, route string, after *RecordKey, limit int) ([]Record, error) {
	cond, arg := primitive.RouteMatch("route", route)
	q, args := query+` WHERE `+cond, []any{arg}
	if after != nil {
		q += ` AND (created_at < ? OR (created_at = ? AND ` + idCol + ` > ?))`
		args = append(args, after.At, after.At, after.ID)
	}
	q += ` ORDER BY created_at DESC, ` + idCol + ` LIMIT ?`
	args = append(args, limit)
	rows, err := g.DB.R.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list the conversation's records: %w", err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var r Record
		var prim, state sql.NullString
		if err := rows.Scan(&r.Key.ID, &r.Key.At, &prim, &state); err != nil {
			return nil, fmt.Errorf("list the conversation's records: %w", err)
		}
		r.Primitive, r.State = prim.String, state.String
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list the conversation's records: %w", err)
	}
	return out, nil
}

// CommandIDs returns the ids of route's commands (every anonymous route's,
// for an anonymous one): the evidence of a conversation selects the
// ledger entries that name them.
func (g *Governor) CommandIDs(ctx context.Context, route string) (map[string]bool, error) {
	return g.recordIDs(ctx, `SELECT command_id FROM commands WHERE `, route)
}

func (g *Governor) recordIDs(ctx context.Context, query, route string) (map[string]bool, error) {
	cond, arg := primitive.RouteMatch("route", route)
	rows, err := g.DB.R.QueryContext(ctx, query+cond, arg)
	if err != nil {
		return nil, fmt.Errorf("select the conversation's records: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("select the conversation's records: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}

// CommandRecord is what Hearth recorded of one command: its primitive,
// input digest, future, state and the envelope a replay returns (Valid
// false while it has none).
type CommandRecord struct {
	Primitive   string
	InputSHA256 string
	FutureID    string
	State       string
	Envelope    sql.NullString
	CreatedAt   int64
	FinishedAt  sql.NullInt64
}

// CommandOf returns command id of route's scope, or ErrNoRecord.
func (g *Governor) CommandOf(ctx context.Context, route, id string) (CommandRecord, error) {
	cond, arg := primitive.RouteMatch("route", route)
	var c CommandRecord
	err := g.DB.R.QueryRowContext(ctx, `SELECT primitive, input_sha256, future_id, state, envelope, created_at, finished_at
		FROM commands WHERE command_id = ? AND `+cond, id, arg).
		Scan(&c.Primitive, &c.InputSHA256, &c.FutureID, &c.State, &c.Envelope, &c.CreatedAt, &c.FinishedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return CommandRecord{}, ErrNoRecord
	}
	if err != nil {
		return CommandRecord{}, fmt.Errorf("read command %s: %w", id, err)
	}
	return c, nil
}

// CommandCall returns the future command id ran as ("" when it has none)
// and its primitive: the panel describes ledger entries by the calls they
// name.
func (g *Governor) CommandCall(ctx context.Context, commandID string) (future, prim string, err error) {
	if err := g.DB.R.QueryRowContext(ctx, `SELECT COALESCE(future_id, ''), primitive FROM commands WHERE command_id = ?`, commandID).Scan(&future, &prim); err != nil {
		return "", "", fmt.Errorf("read command %s: %w", commandID, err)
	}
	return future, prim, nil
}
