package dispatch

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// TestQuickAttemptRunsOnTheCallersGoroutine: a read primitive's bounded
// attempt (Spec.Quick) answers on the caller's goroutine, before any race
// of the inline budget, so even a budget of a nanosecond answers it
// completed inline with its result, and Run never runs; an attempt that
// declines leaves the call to Run racing the budget exactly as before (a
// slow Run goes pending and arrives later); the attempt sees the
// dispatcher (WithEngine), an e-stop while it runs answers cancelled, and
// its panic is a failure. Without the quick attempt, the first call would
// go pending.
func TestQuickAttemptRunsOnTheCallersGoroutine(t *testing.T) {
	db := openTestDB(t)
	var d *Dispatcher
	release := make(chan struct{})
	var runs atomic.Int32
	type in struct {
		Text string `json:"text"`
	}
	spec := &primitive.Spec{Tool: "t", Operation: "quick", Risk: primitive.RiskRead,
		Fields: []primitive.Field{{Name: "text", Type: primitive.TString}},
		Run: primitive.Typed(func(_ context.Context, _ *primitive.Call, in in) (any, error) {
			runs.Add(1)
			<-release
			return "slow " + in.Text, nil
		}),
		Quick: primitive.TypedQuick(func(ctx context.Context, _ *primitive.Call, in in) (any, bool, error) {
			switch in.Text {
			case "decline":
				return nil, false, nil
			case "estop":
				d.CancelRunning(ErrEStop)
				return "stopped", true, nil
			case "panic":
				panic("boom")
			case "engine":
				_, ok := ctx.Value(engineKey{}).(*Dispatcher)
				return ok, true, nil
			}
			return "quick " + in.Text, true, nil
		})}
	d = startTestDispatcher(t, db, time.Nanosecond, spec)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	call := func(text string) *Envelope {
		return d.Call(context.Background(), Request{Route: testRoute, Spec: spec, Input: json.RawMessage(`{"text":"` + text + `"}`)})
	}

	if env := call("a"); env.State != primitive.StateCompleted || env.Result != "quick a" || env.FutureID != "" {
		t.Fatalf("a quick call must answer completed inline with its result even at a budget of 1ns: %+v", env)
	}
	if env := call("engine"); env.State != primitive.StateCompleted || env.Result != true {
		t.Fatalf("the quick attempt must see the dispatcher running it: %+v", env)
	}
	if env := call("panic"); env.State != primitive.StateFailed || env.Error == nil || env.Error.Code != "internal" {
		t.Fatalf("a panicking quick attempt must fail as internal: %+v", env)
	}
	if env := call("estop"); env.State != primitive.StateCancelled || env.Error == nil || env.Error.Code != "cancelled" {
		t.Fatalf("an e-stop during the quick attempt must cancel the call: %+v", env)
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("Run ran %d times for calls the quick attempt answered", n)
	}

	env := call("decline")
	if env.State != primitive.StatePending || env.FutureID == "" {
		t.Fatalf("a declined quick attempt must leave the call to the budget race (a slow Run goes pending): %+v", env)
	}
	close(release)
	ch, stop := d.Watch(env.FutureID)
	defer stop()
	deadline := time.After(time.Minute)
	for {
		f, err := d.GetFuture(context.Background(), testRoute, env.FutureID)
		if err != nil {
			t.Fatal(err)
		}
		if Settled(f.State) {
			var got Envelope
			if err := json.Unmarshal(f.Result, &got); err != nil || f.State != "completed" || got.Result != "slow decline" {
				t.Fatalf("the declined call's future: %+v %s (%v)", f, f.Result, err)
			}
			break
		}
		select {
		case <-ch:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatal("the declined call's future never completed")
		}
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("Run ran %d times, want once (the declined call)", n)
	}
}

// TestQuickOnlyOnReadPrimitives: a quick attempt runs unjournaled, so the
// registry refuses one on a primitive that is journaled.
func TestQuickOnlyOnReadPrimitives(t *testing.T) {
	quick := func(context.Context, *primitive.Call, json.RawMessage) (any, bool, error) { return nil, true, nil }
	run := func(context.Context, *primitive.Call, json.RawMessage) (any, error) { return nil, nil }
	for _, s := range []*primitive.Spec{
		{Tool: "t", Operation: "w", Risk: primitive.RiskWrite, Run: run, Quick: quick},
		{Tool: "t", Operation: "c", Risk: primitive.RiskRead, Compound: true, Run: run, Quick: quick},
	} {
		if _, err := primitive.NewRegistry(s); err == nil {
			t.Errorf("%s: a journaled primitive with a quick attempt was accepted", s.Name())
		}
	}
	if _, err := primitive.NewRegistry(&primitive.Spec{Tool: "t", Operation: "r", Risk: primitive.RiskRead, Run: run, Quick: quick}); err != nil {
		t.Fatal(err)
	}
}
