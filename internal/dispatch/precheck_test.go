package dispatch

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// TestEveryAdmissionPathAppliesPrecheck: a queued call (Enqueue, the path
// of scatter items) is refused by its primitive's Precheck at submission,
// and a dependent call whose references resolve to input the Precheck
// refuses is refused when it is about to start — it never runs either way.
func TestEveryAdmissionPathAppliesPrecheck(t *testing.T) {
	f := newDepsFixture(t)
	var ran atomic.Int64
	picky := &primitive.Spec{Tool: "t", Operation: "picky", Risk: primitive.RiskRead,
		Fields: []primitive.Field{{Name: "text", Type: primitive.TString}},
		Precheck: func(raw json.RawMessage) error {
			var in struct{ Text string }
			if json.Unmarshal(raw, &in) == nil && in.Text == "never" {
				return primitive.Blocked("never", "t.picky: never runs %q", in.Text)
			}
			return nil
		},
		Run: func(context.Context, *primitive.Call, json.RawMessage) (any, error) { return ran.Add(1), nil }}
	specs := append(f.reg.All(), picky)
	reg, err := primitive.NewRegistry(specs...)
	if err != nil {
		t.Fatal(err)
	}
	f.reg = reg
	d := f.start(t, 4)
	defer d.Stop()

	id, refused, err := d.EnqueueChecked(context.Background(), Request{Route: testRoute, Spec: picky, Input: json.RawMessage(`{"text":"never"}`)}, nil)
	if err != nil || !refused {
		t.Fatalf("Precheck must refuse a queued call at submission: refused=%v %v", refused, err)
	}
	if fut, env := settle(t, d, id); fut.State != "blocked" || errCode(env) != "never" {
		t.Fatalf("refused at submission: %s %v", fut.State, env)
	}

	src := enqueue(t, d, "echo", `{"text":"never"}`)
	dep := enqueue(t, d, "picky", `{"text":{"$future":"`+src+`","$path":"result.text"}}`)
	if fut, env := settle(t, d, dep); fut.State != "blocked" || errCode(env) != "never" {
		t.Fatalf("Precheck must refuse resolved input before it runs: %s %v", fut.State, env)
	}
	ok := enqueue(t, d, "picky", `{"text":"fine"}`)
	if fut, env := settle(t, d, ok); fut.State != "completed" {
		t.Fatalf("an input Precheck accepts runs: %v", env)
	}
	if n := ran.Load(); n != 1 {
		t.Fatalf("t.picky ran %d times, want once (only the accepted input)", n)
	}
}
