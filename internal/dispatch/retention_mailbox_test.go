package dispatch_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/store"
)

// TestPruneAbandonedArrivalsKeepsMailboxWorking gives a conversation a
// batch it was offered but never acknowledged, lets the arrivals grow older
// than the limit, prunes, and then uses the real mailbox: the cursor still
// works (a retry gets what is left of its batch, a new request gets the
// fresh arrival once, later arrivals get new seqs), and nothing is
// delivered twice or out of order.
func TestPruneAbandonedArrivalsKeepsMailboxWorking(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d := &dispatch.Dispatcher{DB: db, MaxArrivals: 2, MaxArrivalBytes: 1 << 20}
	now := time.Now()
	longAgo := now.Add(-60 * 24 * time.Hour)
	arrive := func(id string, at time.Time) {
		t.Helper()
		tx, err := db.W.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := dispatch.EnqueueArrival(ctx, tx, "conv", id, []byte(`{"state":"completed"}`), at); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	futures := func(as []dispatch.Arrival) []string {
		out := []string{}
		for _, a := range as {
			out = append(out, a.FutureID)
		}
		return out
	}
	deliver := func(fp string, want ...string) {
		t.Helper()
		got, err := d.Deliver(ctx, "conv", fp)
		if err != nil {
			t.Fatal(err)
		}
		if g := futures(got); !slices.Equal(g, want) {
			t.Fatalf("request %s delivered %v, want %v", fp, g, want)
		}
	}

	arrive("fut_old1", longAgo)
	arrive("fut_old2", longAgo)
	arrive("fut_old3", longAgo)
	deliver("req1", "fut_old1", "fut_old2") // offered, never acknowledged: abandoned
	arrive("fut_new", now)

	rep, err := d.PruneArrivals(ctx, now.Add(-30*24*time.Hour))
	if err != nil || rep.Arrivals != 3 {
		t.Fatalf("prune: %+v %v; want the 3 abandoned arrivals deleted", rep, err)
	}

	deliver("req1")              // a retry of the offered batch: what is left of it
	deliver("req2", "fut_new")   // acknowledges the batch, offers the fresh one
	deliver("req2", "fut_new")   // a retry gets it again
	arrive("fut_later", now)     // a new seq after every deleted one
	deliver("req3", "fut_later") // acknowledges fut_new
	deliver("req4")              // acknowledges fut_later
	if rep, err := d.PruneArrivals(ctx, now.Add(-30*24*time.Hour)); err != nil || rep.Arrivals != 0 {
		t.Fatalf("second prune: %+v %v", rep, err)
	}
	var left int
	if err := db.R.QueryRow(`SELECT COUNT(*) FROM arrivals`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d arrivals left (%v)", left, err)
	}
}
