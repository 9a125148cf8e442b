package dispatchtest

import (
	"context"
	"testing"

	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/store/storetest"
)

// Arrival is an arrival's row, as InsertArrival writes it.
type Arrival struct {
	// Seq is the arrival's place in the mailbox; 0 takes the next one.
	Seq             int64
	Route, FutureID string
	Payload         string // JSON
	CreatedAt       int64  // unix milliseconds
}

// InsertArrivals puts as in their routes' mailboxes.
func InsertArrivals(t testing.TB, ex storetest.Execer, as ...Arrival) {
	t.Helper()
	for _, a := range as {
		var seq any
		if a.Seq != 0 {
			seq = a.Seq
		}
		if _, err := ex.ExecContext(context.Background(), `INSERT INTO arrivals(seq, route, future_id, payload, created_at) VALUES (?, ?, ?, ?, ?)`,
			seq, a.Route, a.FutureID, a.Payload, a.CreatedAt); err != nil {
			t.Fatalf("insert the arrival of %s: %v", a.FutureID, err)
		}
	}
}

// ArrivalSeqs returns the seq of every arrival still kept, in order.
func ArrivalSeqs(t testing.TB, db *store.DB) []int64 {
	t.Helper()
	rows, err := db.R.Query(`SELECT seq FROM arrivals ORDER BY seq`)
	if err != nil {
		t.Fatalf("read the arrivals: %v", err)
	}
	defer rows.Close()
	var seqs []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			t.Fatalf("read the arrivals: %v", err)
		}
		seqs = append(seqs, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read the arrivals: %v", err)
	}
	return seqs
}

// Ack records that route's conversation acknowledged its arrivals up to
// seq, as its next call does.
func Ack(t testing.TB, ex storetest.Execer, route string, seq int64) {
	t.Helper()
	_, err := ex.ExecContext(context.Background(), `INSERT INTO cursors(route, acked_seq) VALUES (?, ?)
		ON CONFLICT(route) DO UPDATE SET acked_seq = excluded.acked_seq`, route, seq)
	if err != nil {
		t.Fatalf("acknowledge the arrivals of %s up to %d: %v", route, seq, err)
	}
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
