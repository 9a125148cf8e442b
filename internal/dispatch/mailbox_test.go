package dispatch_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/store"
)

// mailbox is a Dispatcher on a real database, used only for its mailbox.
func mailbox(t *testing.T, maxArrivals, maxBytes int) *dispatch.Dispatcher {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &dispatch.Dispatcher{DB: db, MaxArrivals: maxArrivals, MaxArrivalBytes: maxBytes}
}

// arrive queues an arrival for future id in route whose payload is a JSON
// object of exactly size bytes.
func arrive(t *testing.T, d *dispatch.Dispatcher, route, id string, size int) {
	t.Helper()
	head := fmt.Sprintf(`{"future_id":%q,"pad":"`, id)
	payload := head + strings.Repeat("x", size-len(head)-2) + `"}`
	if len(payload) != size {
		t.Fatalf("payload of %s is %d bytes, want %d", id, len(payload), size)
	}
	err := d.DB.InTx(context.Background(), func(tx *sql.Tx) error {
		return dispatch.EnqueueArrival(context.Background(), tx, route, id, []byte(payload), time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// deliver returns the future ids of the batch offered to request fp,
// checking that each envelope is the payload queued for it.
func deliver(t *testing.T, d *dispatch.Dispatcher, route, fp string) []string {
	t.Helper()
	arr, err := d.Deliver(context.Background(), route, fp)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	var last int64
	for _, a := range arr {
		if !strings.Contains(string(a.Envelope), `"future_id":"`+a.FutureID+`"`) {
			t.Fatalf("arrival %s carries another envelope: %s", a.FutureID, a.Envelope)
		}
		if a.Seq <= last {
			t.Fatalf("batch out of order: seq %d after %d", a.Seq, last)
		}
		last = a.Seq
		ids = append(ids, a.FutureID)
	}
	return ids
}

func TestDeliverBoundsBatchByBytes(t *testing.T) {
	const route = "r:bytes"
	d := mailbox(t, 100, 250)
	arrive(t, d, route, "a", 100)
	arrive(t, d, route, "b", 100)
	arrive(t, d, "r:other", "other", 100) // another conversation's: never counted or offered
	arrive(t, d, route, "c", 100)
	arrive(t, d, route, "big", 1000) // alone larger than max_arrival_bytes
	arrive(t, d, route, "e", 100)

	steps := []struct {
		fp   string
		want string
	}{
		{"fp1", "a,b"}, // c would bring the batch to 300 > 250 bytes
		{"fp1", "a,b"}, // a retry is offered the same batch
		{"fp2", "c"},   // the next request acknowledges a,b; c + big exceed the limit
		{"fp3", "big"}, // an oversized arrival still goes out, alone
		{"fp4", "e"},   // and does not wedge what follows
		{"fp5", ""},    // everything acknowledged
		{"fp6", ""},
	}
	for i, s := range steps {
		if got := strings.Join(deliver(t, d, route, s.fp), ","); got != s.want {
			t.Fatalf("step %d (request %s): offered [%s], want [%s]", i, s.fp, got, s.want)
		}
	}
	var left int
	if err := d.DB.R.QueryRow(`SELECT COUNT(*) FROM arrivals WHERE route = ?`, route).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Fatalf("%d acknowledged arrivals left in the mailbox", left)
	}
	if got := strings.Join(deliver(t, d, "r:other", "x"), ","); got != "other" {
		t.Fatalf("the other conversation's mailbox: [%s], want [other]", got)
	}
}

func TestDeliverBoundsBatchByCount(t *testing.T) {
	const route = "r:count"
	d := mailbox(t, 2, 1<<20)
	for _, id := range []string{"a", "b", "c"} {
		arrive(t, d, route, id, 64)
	}
	for i, want := range []string{"a,b", "c", ""} {
		if got := strings.Join(deliver(t, d, route, fmt.Sprintf("fp%d", i)), ","); got != want {
			t.Fatalf("request %d: offered [%s], want [%s]", i, got, want)
		}
	}
}

func TestDeliverAnonymousRouteHasNoMailbox(t *testing.T) {
	d := mailbox(t, 100, 1<<20)
	route := dispatch.AnonymousPrefix + "req_1"
	// EnqueueArrival already drops these; a row put there anyway must still
	// not be offered, since no later request of that route exists.
	if _, err := d.DB.W.Exec(`INSERT INTO arrivals(route, future_id, payload, created_at) VALUES (?, 'a', '{}', 0)`, route); err != nil {
		t.Fatal(err)
	}
	if got := deliver(t, d, route, "fp"); len(got) != 0 {
		t.Fatalf("an anonymous route was offered %v", got)
	}
}
