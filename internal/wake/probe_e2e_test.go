//go:build !windows

package wake_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestNoRouteProbeWhileWakeCannotUseIt: with automatic wake off and no
// ChatGPT window, a pending answer in a ChatGPT conversation asks the
// model to repeat nothing (no route_probe, no "Route probe" sentence);
// armed, the next pending answer carries one, and disarmed again none.
func TestNoRouteProbeWhileWakeCannotUseIt(t *testing.T) {
	in := hearthtest.Start(t, hearthtest.Trusted)
	c := hearthtest.Connect(t, in.URL, "")
	meta := map[string]any{"openai/session": "sess-probe-off"}
	gate := filepath.Join(t.TempDir(), "gate")
	pending := func(what string) *hearthtest.Result {
		t.Helper()
		r, err := c.TryCall("machine", map[string]any{"operation": "exec", "command": "sh",
			"args": []string{"-c", `while [ ! -e "$0" ]; do sleep 0.02; done`, gate}, "detach": true}, meta)
		if err != nil || r.State() != "pending" {
			t.Fatalf("%s: %v %s", what, err, r.Raw)
		}
		return r
	}
	if r := pending("wake off, no window"); r.Get("route_probe") != nil || strings.Contains(r.Text, "Route probe") || strings.Contains(r.Text, "hrp_") {
		t.Fatalf("with wake off and no ChatGPT window the answer asks for a route probe: %s", r.Raw)
	}
	ctx := context.Background()
	if err := in.App.SetWakeArmed(ctx, "test", true); err != nil {
		t.Fatal(err)
	}
	if r := pending("armed"); r.Get("route_probe.nonce") == nil || !strings.Contains(r.Text, "Route probe") {
		t.Fatalf("armed, the pending answer carries no route probe: %s", r.Raw)
	}
	if err := in.App.SetWakeArmed(ctx, "test", false); err != nil {
		t.Fatal(err)
	}
	if r := pending("disarmed"); r.Get("route_probe") != nil {
		t.Fatalf("disarmed again, the answer still asks for a route probe: %s", r.Raw)
	}
}
