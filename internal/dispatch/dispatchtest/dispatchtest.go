// Package dispatchtest reads and writes the dispatcher's tables for other
// packages' tests, so that they check or set up a future, an arrival or a
// mailbox's cursor without naming the dispatcher's tables or columns
// (dispatch owns them: docs/ARCHITECTURE.md, "Who owns which table").
package dispatchtest

import (
	"database/sql"
	"errors"
	"testing"
	"time"

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

// OfferAll records that every arrival of route so far was offered to it,
// as delivering them to a call does (its cursor's offered_seq moves to
// the last arrival).
func OfferAll(t testing.TB, db *store.DB, route string) {
	t.Helper()
	_, err := db.W.Exec(`INSERT INTO cursors(route, offered_seq) SELECT ?, COALESCE(MAX(seq), 0) FROM arrivals WHERE route = ?
		ON CONFLICT(route) DO UPDATE SET offered_seq = excluded.offered_seq`, route, route)
	if err != nil {
		t.Fatalf("offer the arrivals of %s: %v", route, err)
	}
}

// ForgetOffered makes route's arrivals not offered again (offered_seq 0).
func ForgetOffered(t testing.TB, db *store.DB, route string) {
	t.Helper()
	if _, err := db.W.Exec(`UPDATE cursors SET offered_seq = 0 WHERE route = ?`, route); err != nil {
		t.Fatalf("forget what %s was offered: %v", route, err)
	}
}

// InsertRunning records a detached machine.exec future id of route as
// running since now, as one whose result has not arrived yet.
func InsertRunning(t testing.TB, db *store.DB, id, route string) {
	t.Helper()
	now := time.Now().UnixMilli()
	InsertFutures(t, db.W, Future{ID: id, Route: route, Primitive: "machine.exec", State: "running", Detached: true, CreatedAt: now, StartedAt: now})
}
