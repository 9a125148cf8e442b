package dispatch_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/store"
)

// cachedMailbox is mailbox with the mailbox cache of a started dispatcher.
func cachedMailbox(t *testing.T) *dispatch.Dispatcher {
	t.Helper()
	d := mailbox(t, 100, 1<<20)
	dispatch.OpenMailboxCache(t, d)
	return d
}

// wantProbes checks how many times Deliver has read a mailbox.
func wantProbes(t *testing.T, d *dispatch.Dispatcher, want int64, when string) {
	t.Helper()
	if got := dispatch.MailboxProbes(d); got != want {
		t.Fatalf("%s: %d mailbox reads, want %d", when, got, want)
	}
}

// An empty mailbox is read once; later calls are answered from the cache
// until something is committed, and an arrival queued in this process is
// delivered on the very next call.
func TestMailboxCacheSeesArrivalsOfThisProcess(t *testing.T) {
	const route = "r:cache"
	d := cachedMailbox(t)
	if got := deliver(t, d, route, "fp1"); len(got) != 0 {
		t.Fatalf("empty mailbox offered %v", got)
	}
	wantProbes(t, d, 1, "first call")
	for i := range 3 {
		if got := deliver(t, d, route, fmt.Sprintf("fp-again-%d", i)); len(got) != 0 {
			t.Fatalf("empty mailbox offered %v", got)
		}
	}
	wantProbes(t, d, 1, "calls with nothing committed in between")

	arrive(t, d, route, "a", 64)
	if got := strings.Join(deliver(t, d, route, "fp2"), ","); got != "a" {
		t.Fatalf("after an arrival: offered [%s], want [a]", got)
	}
	if got := strings.Join(deliver(t, d, route, "fp2"), ","); got != "a" {
		t.Fatalf("a retry: offered [%s], want [a] again", got)
	}
	if got := deliver(t, d, route, "fp3"); len(got) != 0 {
		t.Fatalf("after the acknowledgement: offered %v", got)
	}
	// fp3 wrote the acknowledgement; fp4 reads the mailbox again and
	// finds it empty, and the calls after it are answered from the cache.
	if got := deliver(t, d, route, "fp4"); len(got) != 0 {
		t.Fatalf("empty mailbox offered %v", got)
	}
	n := dispatch.MailboxProbes(d)
	if got := deliver(t, d, route, "fp4b"); len(got) != 0 {
		t.Fatalf("empty mailbox offered %v", got)
	}
	wantProbes(t, d, n, "a call after the mailbox was found empty again")

	// Another conversation's arrival is not this one's, but it was
	// committed: this conversation's mailbox is read again, once.
	arrive(t, d, "r:other", "o", 64)
	if got := deliver(t, d, route, "fp5"); len(got) != 0 {
		t.Fatalf("another conversation's arrival was offered: %v", got)
	}
	wantProbes(t, d, n+1, "after another conversation's arrival")
	if got := strings.Join(deliver(t, d, "r:other", "fp6"), ","); got != "o" {
		t.Fatalf("the other conversation: offered [%s], want [o]", got)
	}
}

// An arrival queued by another process on the same database file (the
// operator's CLI opens it offline) is delivered, though this process's
// cache had found the mailbox empty and this process committed nothing.
func TestMailboxCacheSeesArrivalsOfAnotherProcess(t *testing.T) {
	const route = "r:cross"
	d := cachedMailbox(t)
	for i := range 2 {
		if got := deliver(t, d, route, fmt.Sprintf("fp%d", i)); len(got) != 0 {
			t.Fatalf("empty mailbox offered %v", got)
		}
	}
	wantProbes(t, d, 1, "before the other process writes")

	cmd := exec.Command(os.Args[0], "-test.run=^TestMailboxCacheHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "HEARTH_TEST_ARRIVAL_DB="+d.DB.Path, "HEARTH_TEST_ARRIVAL_ROUTE="+route)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "queued x1") {
		t.Fatalf("the other process: %v\n%s", err, out)
	}
	// The cache looks for another process's commits at most every
	// foreignCheck: poll (a generous deadline, no fixed sleep).
	var got []string
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; len(got) == 0 && time.Now().Before(deadline); i++ {
		got = deliver(t, d, route, fmt.Sprintf("fp-next-%d", i))
	}
	if strings.Join(got, ",") != "x1" {
		t.Fatalf("after another process queued x1: offered %v, want [x1]", got)
	}
}

// TestMailboxCacheHelperProcess is the other process of
// TestMailboxCacheSeesArrivalsOfAnotherProcess: it opens the database file
// it is given and queues one arrival there.
func TestMailboxCacheHelperProcess(t *testing.T) {
	file, route := os.Getenv("HEARTH_TEST_ARRIVAL_DB"), os.Getenv("HEARTH_TEST_ARRIVAL_ROUTE")
	if file == "" {
		t.Skip("the other process of TestMailboxCacheSeesArrivalsOfAnotherProcess")
	}
	ctx := context.Background()
	db, err := store.Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.InTx(ctx, func(tx *sql.Tx) error {
		return dispatch.EnqueueArrival(ctx, tx, route, "x1", []byte(`{"future_id":"x1"}`), time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("queued x1")
}

// Arrivals queued concurrently with calls of the same and another
// conversation are each offered exactly once (every call is a distinct
// request, so each acknowledges the batch before), none missed.
func TestMailboxCacheConcurrentArrivalsExactlyOnce(t *testing.T) {
	const route, writers, each = "r:busy", 3, 60
	d := mailbox(t, 7, 1<<20)
	dispatch.OpenMailboxCache(t, d)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				err := d.DB.InTx(ctx, func(tx *sql.Tx) error {
					return dispatch.EnqueueArrival(ctx, tx, route, id, []byte(fmt.Sprintf(`{"future_id":%q}`, id)), time.Now())
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	// Another conversation's calls keep the cache busy meanwhile.
	stop := make(chan struct{})
	var other sync.WaitGroup
	other.Add(1)
	go func() {
		defer other.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := d.Deliver(ctx, "r:quiet", fmt.Sprintf("q%d", i)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var seen []string
	call := 0
	next := func() []string {
		call++
		return deliver(t, d, route, fmt.Sprintf("fp%d", call))
	}
	for writing := true; writing; {
		select {
		case <-done:
			writing = false
		default:
		}
		seen = append(seen, next()...)
	}
	// Everything is committed now: the calls that follow drain the rest.
	for got := next(); len(got) > 0; got = next() {
		seen = append(seen, got...)
	}
	close(stop)
	other.Wait()
	want := make([]string, 0, writers*each)
	for w := range writers {
		for i := range each {
			want = append(want, fmt.Sprintf("w%d-%d", w, i))
		}
	}
	slices.Sort(want)
	got := slices.Clone(seen)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("offered %d arrivals (%d distinct), want each of %d exactly once", len(seen), len(slices.Compact(got)), len(want))
	}
}
