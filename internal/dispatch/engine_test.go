package dispatch

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// TestWithEngineHandsTheRunningDispatcher: a primitive built with
// WithEngine receives the dispatcher that runs it, inline and as a
// detached future, and one reached outside a dispatcher is refused as
// unavailable, never run with no engine.
func TestWithEngineHandsTheRunningDispatcher(t *testing.T) {
	db := openTestDB(t)
	got := make(chan *Dispatcher, 2)
	spec := &primitive.Spec{Tool: "t", Operation: "engine", Risk: primitive.RiskRead,
		Fields: []primitive.Field{{Name: "text", Type: primitive.TString}},
		Run: WithEngine(func(_ context.Context, e *Dispatcher, _ *primitive.Call, in struct {
			Text string `json:"text"`
		}) (any, error) {
			got <- e
			return in.Text, nil
		})}
	d := startTestDispatcher(t, db, time.Minute, spec)

	env := d.Call(context.Background(), Request{Route: testRoute, Spec: spec, Input: json.RawMessage(`{"text":"inline"}`)})
	if env.State != primitive.StateCompleted || env.Result != "inline" {
		t.Fatalf("inline call: %+v", env)
	}
	if e := <-got; e != d {
		t.Fatalf("the inline call got engine %p, want the dispatcher running it %p", e, d)
	}
	env = d.Call(context.Background(), Request{Route: testRoute, Spec: spec, Input: json.RawMessage(`{"text":"detached"}`), Detach: true})
	if env.State != primitive.StatePending {
		t.Fatalf("detached call: %+v", env)
	}
	select {
	case e := <-got:
		if e != d {
			t.Fatalf("the detached future got engine %p, want %p", e, d)
		}
	case <-time.After(time.Minute):
		t.Fatal("the detached future never ran")
	}

	_, err := spec.Run(context.Background(), &primitive.Call{Route: testRoute}, json.RawMessage(`{"text":"outside"}`))
	if pe := primitive.AsError(err); err == nil || pe.Code != "unavailable" || pe.State != primitive.StateBlocked {
		t.Fatalf("a call outside a dispatcher must be refused as unavailable: %v", err)
	}
	if len(got) != 0 {
		t.Fatal("the runner ran outside a dispatcher")
	}
}
