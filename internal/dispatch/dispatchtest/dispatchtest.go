// Package dispatchtest reads the dispatcher's tables for other packages'
// tests, so that they check a future without naming the dispatcher's
// tables or columns (dispatch owns them: docs/ARCHITECTURE.md, "Who owns
// which table").
package dispatchtest

import (
	"database/sql"
	"errors"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
)

// State returns the state of future id, failing the test when there is
// no such future.
func State(t testing.TB, db *store.DB, id string) string {
	t.Helper()
	var st string
	if err := db.R.QueryRow(`SELECT state FROM futures WHERE id = ?`, id).Scan(&st); err != nil {
		t.Fatalf("read the state of future %s: %v", id, err)
	}
	return st
}

// Route returns the stored route of future id, "" when there is no such
// future.
func Route(t testing.TB, db *store.DB, id string) string {
	t.Helper()
	var route string
	err := db.R.QueryRow(`SELECT route FROM futures WHERE id = ?`, id).Scan(&route)
	if errors.Is(err, sql.ErrNoRows) {
		return ""
	}
	if err != nil {
		t.Fatalf("read the route of future %s: %v", id, err)
	}
	return route
}

// Count returns how many futures db holds.
func Count(t testing.TB, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM futures`).Scan(&n); err != nil {
		t.Fatalf("count the futures: %v", err)
	}
	return n
}
