package app_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestToolDescriptionsFollowGovernance: every tool description in
// tools/list states the policy mode and the e-stop state, the ui tool's
// what this host cannot do of it (UI Automation off Windows), and each
// follows each change as it happens — an operator's policy
// change, an e-stop latched by the operator or by the model, and a reset
// made through another database handle (as `safety reset` does from its
// own process).
func TestToolDescriptionsFollowGovernance(t *testing.T) {
	ctx := context.Background()
	in := hearthtest.Start(t, nil) // ask
	c := hearthtest.Connect(t, in.URL, "disclosure")
	check := func(step string, want ...string) {
		t.Helper()
		res, err := c.Session.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("%s: tools/list: %v", step, err)
		}
		if len(res.Tools) < 7 {
			t.Fatalf("%s: %d tools", step, len(res.Tools))
		}
		for _, tl := range res.Tools {
			for _, w := range want {
				if !strings.Contains(tl.Description, w) {
					t.Errorf("%s: tool %s description lacks %q:\n%s", step, tl.Name, w, tl.Description)
				}
			}
			if runtime.GOOS != "windows" {
				const noUIA = "Unavailable here: ui automation (Windows only)"
				if has := strings.Contains(tl.Description, noUIA); has != (tl.Name == "ui") {
					t.Errorf("%s: tool %s says %q: %v (only the ui tool should)", step, tl.Name, noUIA, has)
				}
			}
			if n := strings.Count(tl.Description, "Policy mode:"); n != 1 {
				t.Errorf("%s: tool %s states the policy %d times:\n%s", step, tl.Name, n, tl.Description)
			}
		}
		all, _ := json.Marshal(res.Tools)
		t.Logf("%s: tools/list is %d bytes", step, len(all))
		if len(all) > 40000 {
			t.Errorf("%s: tools/list is %d bytes, budget is 40000", step, len(all))
		}
	}
	released := "E-stop: released"
	latched := "E-STOP LATCHED"
	var unavailable []string
	check("start", append([]string{"Policy mode: ask", released}, unavailable...)...)

	if err := in.App.Operator.SetPolicy(ctx, "alice", config.ModeTrusted); err != nil {
		t.Fatal(err)
	}
	check("policy trusted", append([]string{"Policy mode: trusted", released}, unavailable...)...)

	if err := in.App.Operator.EStop(ctx, "alice", "stop"); err != nil {
		t.Fatal(err)
	}
	check("operator e-stop", append([]string{"Policy mode: trusted", latched}, unavailable...)...)

	if err := in.App.Operator.Reset(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	check("operator reset", "Policy mode: trusted", released)

	if err := in.App.Operator.SetPolicy(ctx, "alice", config.ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	if r := c.Call("machine", map[string]any{"operation": "estop", "reason": "model stop"}); r.State() != "completed" {
		t.Fatalf("estop: %s", r.Raw)
	}
	check("model e-stop", "Policy mode: read-only", latched)

	off, err := app.OpenOffline(ctx, in.Home, filepath.Join(in.Home, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if err := off.Operator.Reset(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	check("reset from another handle", "Policy mode: read-only", released)

	// The longest listing: the default mode (every tool says what asks)
	// with wake armed (its sentence is the longer one).
	if err := in.App.Operator.SetPolicy(ctx, "alice", config.ModeAsk); err != nil {
		t.Fatal(err)
	}
	if err := in.App.SetWakeArmed(ctx, "alice", true); err != nil {
		t.Fatal(err)
	}
	check("ask, wake armed", "Policy mode: ask", released, "Wake: ARMED")
}
