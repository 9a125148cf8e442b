//go:build !windows

package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestLastBatchOfferedAgainAfterRestart: an answer that carried arrivals
// may have died with the process that wrote it, so after a restart the
// conversation's last batch is offered again instead of being acknowledged
// by the next request (at-least-once, never at-most-once).
func TestLastBatchOfferedAgainAfterRestart(t *testing.T) {
	home := t.TempDir()
	in := hearthtest.StartHome(t, home, trusted)
	c := hearthtest.Connect(t, in.URL, "reoffer")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"x"}, "detach": true})
	fid, _ := r.Get("future_id").(string)
	deadline := time.Now().Add(30 * time.Second)
	for {
		f, err := in.App.Dispatcher.GetFuture(context.Background(), r0route(t, in, fid), fid)
		if err == nil && f.State == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("future did not complete: %v %v", f, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	arrivals := func(m map[string]any) []any {
		a, _ := hearthtest.Get(m, "result.structuredContent.arrivals").([]any)
		return a
	}
	// The batch is offered (as if its answer was then lost).
	if got := arrivals(rawCall(t, in.URL, 41, "reoffer")); len(got) != 1 {
		t.Fatalf("first offer: %v", got)
	}
	in.Stop()

	in2 := hearthtest.StartHome(t, home, trusted)
	got := arrivals(rawCall(t, in2.URL, 42, "reoffer"))
	if len(got) != 1 || hearthtest.Get(got[0], "future_id") != fid {
		t.Fatalf("after a restart the last batch must be offered again, got %v", got)
	}
	if got := arrivals(rawCall(t, in2.URL, 43, "reoffer")); len(got) != 0 {
		t.Fatalf("the next distinct request acknowledges it: %v", got)
	}
}
