package control_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/control"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestNewRequiresEveryPart: the operator's controls carry decisions out
// on the governor's engines, so each part is required, and a missing one
// is named.
func TestNewRequiresEveryPart(t *testing.T) {
	in := hearthtest.Start(t, nil)
	a := in.App
	for _, tc := range []struct {
		part string
		new  func() (*control.Operator, error)
	}{
		{"governor", func() (*control.Operator, error) { return control.New(nil, a.Dispatcher, a.Sessions, a.Opened, nil) }},
		{"dispatcher", func() (*control.Operator, error) { return control.New(a.Gov, nil, a.Sessions, a.Opened, nil) }},
		{"session manager", func() (*control.Operator, error) { return control.New(a.Gov, a.Dispatcher, nil, a.Opened, nil) }},
		{"apps Hearth opened", func() (*control.Operator, error) { return control.New(a.Gov, a.Dispatcher, a.Sessions, nil, nil) }},
	} {
		if _, err := tc.new(); err == nil || !strings.Contains(err.Error(), tc.part) {
			t.Errorf("controls without a %s: %v", tc.part, err)
		}
	}
	if _, err := control.New(a.Gov, a.Dispatcher, a.Sessions, a.Opened, nil); err != nil {
		t.Fatalf("controls over every part: %v", err)
	}
}

// TestExpiryLoopExpiresAPermitWhenDue: nobody calls ExpirePermits here;
// the loop a running Hearth keeps learns of the new permit, sleeps until
// it is due, and expires it, so the parked call arrives blocked.
func TestExpiryLoopExpiresAPermitWhenDue(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask
	in.App.Gov.PermitTTL = 300 * time.Millisecond
	c := hearthtest.Connect(t, in.URL, "expiry-loop")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"never"}})
	if r.State() != "pending" || r.Get("permit_id") == nil {
		t.Fatalf("a call under ask must park: %s", r.Raw)
	}
	arr := c.WaitArrival(r.Get("future_id").(string), r)
	if hearthtest.Get(arr, "envelope.state") != "blocked" || hearthtest.Get(arr, "envelope.error.code") != "permit_expired" {
		t.Fatalf("the permit must expire by itself: %v", arr)
	}
	if ps, err := in.App.Operator.Permits(t.Context(), "expired"); err != nil || len(ps) != 1 || ps[0].ID != r.Get("permit_id") {
		t.Fatalf("expired permits: %+v %v", ps, err)
	}
}
