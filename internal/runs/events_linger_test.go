package runs

import (
	"context"
	"sync"
	"testing"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// TestHistorySeesCallsTheRecorderHolds: the background recorder gathers
// calls for a while before it writes them; History flushes what it holds,
// so a conversation's history always has its latest calls, in order.
func TestHistorySeesCallsTheRecorderHolds(t *testing.T) {
	ev, _ := newTestEvents(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	ev.startRecorder(ctx, &wg)
	defer func() { cancel(); wg.Wait() }()
	for _, op := range []string{"a", "b", "c"} {
		ev.Observe(ctx, &primitive.Spec{Tool: "t", Operation: op}, "r:one")
	}
	h, err := ev.History(ctx, "r:one", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 3 || h[0] != "t.a" || h[1] != "t.b" || h[2] != "t.c" {
		t.Fatalf("history = %q, want [t.a t.b t.c]", h)
	}
	ev.Observe(ctx, &primitive.Spec{Tool: "t", Operation: "d"}, "r:one")
	cancel()
	wg.Wait()
	if h, _ = ev.History(context.Background(), "r:one", 10); len(h) != 4 || h[3] != "t.d" {
		t.Fatalf("after stop, history = %q, want the pending call written", h)
	}
}
