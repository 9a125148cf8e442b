// Package governtest reads and writes the governor's tables for other
// packages' tests, so that they check or set up a command, a permit, a
// setting or an UNKNOWN without naming the governor's tables or columns
// (govern owns them: docs/ARCHITECTURE.md, "Who owns which table").
package governtest

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/store"
)

// CommandState returns the state of the command journaled under id, ""
// when none is.
func CommandState(t testing.TB, db *store.DB, id string) string {
	t.Helper()
	var st string
	err := db.R.QueryRow(`SELECT state FROM commands WHERE command_id = ?`, id).Scan(&st)
	if errors.Is(err, sql.ErrNoRows) {
		return ""
	}
	if err != nil {
		t.Fatalf("read the state of command %s: %v", id, err)
	}
	return st
}

// PermitsOf returns how many permits were asked for future id.
func PermitsOf(t testing.TB, db *store.DB, futureID string) int {
	t.Helper()
	var n int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM permits WHERE future_id = ?`, futureID).Scan(&n); err != nil {
		t.Fatalf("count the permits of future %s: %v", futureID, err)
	}
	return n
}

// OpenUnknowns returns the command ids of the UNKNOWNs not yet
// reconciled, in no particular order.
func OpenUnknowns(t testing.TB, db *store.DB) []string {
	t.Helper()
	rows, err := db.R.Query(`SELECT command_id FROM unknowns WHERE reconciled_at IS NULL`)
	if err != nil {
		t.Fatalf("read the open UNKNOWNs: %v", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatalf("read the open UNKNOWNs: %v", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read the open UNKNOWNs: %v", err)
	}
	return ids
}

// OpenUnknownTx records, inside tx, an UNKNOWN outcome for id (a command
// or a scheduled future's id) that closes route's gate until it is
// reconciled, as the governor's recovery does after a crash.
func OpenUnknownTx(ctx context.Context, tx *sql.Tx, id, route, prim string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO unknowns(command_id, route, primitive, created_at) VALUES (?,?,?,?) ON CONFLICT(command_id) DO NOTHING`,
		id, route, prim, at.UnixMilli())
	return err
}
