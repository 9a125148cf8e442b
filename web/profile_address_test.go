package web_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// TestProfileFollowsTheMCPAddress: Hearth connected once, then started
// again on the same data directory with its MCP endpoint on another port
// (the tests' endpoint takes a free port every run, as a Hearth whose
// port was taken does): before tunnel-client starts, its profile is made
// again with the address Hearth really listens on now, and the FAKE
// tunnel-client runs with it and gets ready.
func TestProfileFollowsTheMCPAddress(t *testing.T) {
	fake := fakeTunnelClient(t)
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	t.Setenv("FAKE_TUNNEL_PROFILE_DIR", t.TempDir())
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	first := hearthtest.StartHome(t, home, nil)
	tun := first.App.Tunnel
	sum := fileSum(t, fake)
	if _, err := tun.PinClient(fake, sum); err != nil {
		t.Fatal(err)
	}
	if err := tun.SetKey(newRuntimeKey(t)); err != nil {
		t.Fatal(err)
	}
	if res, err := tun.Init(ctx, setupTunnelID, first.App.MCPURL()); err != nil || !res.OK() {
		t.Fatalf("init: %+v, %v", res, err)
	}
	if err := tun.UpdateConfig(func(c *config.Tunnel) error { c.Autostart = true; return nil }); err != nil {
		t.Fatal(err)
	}
	oldURL := first.App.MCPURL()
	first.Stop()

	second := hearthtest.StartHome(t, home, nil)
	newURL := second.App.MCPURL()
	if newURL == oldURL {
		t.Fatalf("the second Hearth listens on the same address %s; the test needs another", newURL)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(starts)
		if strings.Contains(string(b), "mcp_server_url="+newURL) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tunnel-client never ran with Hearth's new address %s; starts:\n%s\ntunnel %+v", newURL, b, second.App.Tunnel.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if b, _ := os.ReadFile(starts); strings.Contains(string(b), "mcp_server_url="+oldURL) {
		t.Errorf("tunnel-client ran with the old address at some point:\n%s", b)
	}
	for second.App.Tunnel.Status().State != tunnel.StateReady {
		if time.Now().After(deadline) {
			t.Fatalf("not ready at the new address: %+v", second.App.Tunnel.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
