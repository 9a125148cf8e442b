package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/peeruser"
	"github.com/hearth-dev/hearth/internal/peeruser/peerusertest"
	"github.com/hearth-dev/hearth/internal/tray"
)

var mcpHeaders = []string{
	"Content-Type=application/json",
	"Accept=application/json, text/event-stream",
	"MCP-Protocol-Version=2025-06-18",
}

// execCall is a machine.exec of touch marker, as a raw MCP request.
func execCall(marker string) string {
	args, _ := json.Marshal(map[string]any{"operation": "exec", "command": "touch", "args": []string{marker}})
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"machine","arguments":%s,"_meta":{"hearth/conversation":"loopback"}}}`, args)
}

func ledgerSize(t *testing.T, a *app.App) int64 {
	t.Helper()
	n, err := a.Ledger.Size(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// loopbackAddrs are the listen addresses of the test: IPv4, and IPv6 when
// this host has it.
func loopbackAddrs(t *testing.T) []string {
	addrs := []string{"127.0.0.1:0"}
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		ln.Close()
		addrs = append(addrs, "[::1]:0")
	} else {
		t.Logf("no IPv6 loopback here (%v): IPv4 only", err)
	}
	return addrs
}

// TestOtherAccountRefusedEverywhere: a client process started as another
// account (uid 65534) gets 403 from the MCP endpoint, the control panel
// and the tray control endpoint, on IPv4 and IPv6, and nothing it sent
// ran: no file, no ledger entry, the panel's login token still unused,
// the tray never asked to open. The same client as Hearth's own account
// is served by all three.
func TestOtherAccountRefusedEverywhere(t *testing.T) {
	other := peerusertest.Other(t)
	for _, addr := range loopbackAddrs(t) {
		t.Run(addr, func(t *testing.T) {
			in := hearthtest.StartWith(t, hearthtest.Trusted, func(o *app.Options) { o.MCPAddr, o.PanelAddr = addr, addr })
			a := in.App
			marker := filepath.Join(t.TempDir(), "ran")
			before := ledgerSize(t, a)

			// MCP endpoint.
			got := peerusertest.Request(t, other, "POST", a.MCPURL(), execCall(marker), mcpHeaders...)
			if got.Status != http.StatusForbidden || got.Body != peeruser.ForbiddenBody {
				t.Errorf("MCP endpoint, another account: %+v, want 403", got)
			}
			// Control panel: a valid one-time login URL, which another
			// account must not be able to redeem.
			login, err := a.NewLoginURL()
			if err != nil {
				t.Fatal(err)
			}
			if got := peerusertest.Request(t, other, "GET", login, ""); got.Status != http.StatusForbidden {
				t.Errorf("panel, another account: %+v, want 403", got)
			}
			// The tray control endpoint, even with its secret.
			ctl, secret, opened := startControl(t, false)
			if got := peerusertest.Request(t, other, "POST", ctl+"/open", "", "Authorization=Bearer "+secret); got.Status != http.StatusForbidden {
				t.Errorf("tray control, another account: %+v, want 403", got)
			}

			if exists(marker) {
				t.Error("another account's machine.exec ran")
			}
			if n := ledgerSize(t, a); n != before {
				t.Errorf("another account's requests left %d ledger entries", n-before)
			}
			if opened.Load() != 0 {
				t.Error("another account opened the panel through the tray")
			}

			// The same client as Hearth's own account is served.
			got = peerusertest.Request(t, nil, "POST", a.MCPURL(), execCall(marker), mcpHeaders...)
			if got.Status != http.StatusOK || !exists(marker) {
				t.Errorf("MCP endpoint, own account: %+v (ran: %v), want 200 and the file", got, exists(marker))
			}
			if ledgerSize(t, a) == before {
				t.Error("own account's exec left no ledger entry")
			}
			if got := peerusertest.Request(t, nil, "GET", login, ""); got.Status != http.StatusSeeOther && got.Status != http.StatusFound {
				t.Errorf("panel, own account: %+v, want the login redirect (the token was still unused)", got)
			}
			if got := peerusertest.Request(t, nil, "POST", ctl+"/open", "", "Authorization=Bearer "+secret); got.Status != http.StatusNoContent || opened.Load() != 1 {
				t.Errorf("tray control, own account: %+v (opened %d), want 204", got, opened.Load())
			}
		})
	}
}

// TestLoopbackSameUserOff: with loopback_same_user false another account
// is served (the switch is honoured) and host_info, the panel's Status
// page and the tray control endpoint's setting disclose it.
func TestLoopbackSameUserOff(t *testing.T) {
	other := peerusertest.Other(t)
	in := hearthtest.Start(t, func(c *config.Config) { hearthtest.Trusted(c); c.LoopbackSameUser = false })
	a := in.App
	marker := filepath.Join(t.TempDir(), "ran")
	if got := peerusertest.Request(t, other, "POST", a.MCPURL(), execCall(marker), mcpHeaders...); got.Status != http.StatusOK || !exists(marker) {
		t.Fatalf("another account with loopback_same_user false: %+v (ran %v), want served", got, exists(marker))
	}
	ctl, secret, opened := startControl(t, true)
	if got := peerusertest.Request(t, other, "POST", ctl+"/open", "", "Authorization=Bearer "+secret); got.Status != http.StatusNoContent || opened.Load() != 1 {
		t.Errorf("tray control with AnyAccount: %+v, want 204", got)
	}

	lb := hostInfoLoopback(t, in.URL)
	if lb["same_user_only"] != false || !strings.Contains(fmt.Sprint(lb["warning"]), "every account on this computer") {
		t.Errorf("host_info loopback = %v", lb)
	}
	if !a.PanelDeps().AnyAccount {
		t.Error("the panel is not told that every account reaches Hearth")
	}
}

// TestHostInfoLoopbackOn: host_info says who may connect by default.
func TestHostInfoLoopbackOn(t *testing.T) {
	in := hearthtest.Start(t, nil)
	lb := hostInfoLoopback(t, in.URL)
	me, _ := peeruser.Self()
	if lb["same_user_only"] != true || lb["account"] != me.String() || !strings.Contains(fmt.Sprint(lb["owner_lookup"]), "netlink") {
		t.Errorf("host_info loopback = %v", lb)
	}
	if in.App.PanelDeps().AnyAccount {
		t.Error("the panel warns although loopback_same_user is true")
	}
}

func hostInfoLoopback(t *testing.T, url string) map[string]any {
	t.Helper()
	c := hearthtest.Connect(t, url, "loopback-status")
	r := c.Call("machine", map[string]any{"operation": "host_info"})
	lb, _ := r.Get("result.loopback").(map[string]any)
	if lb == nil {
		t.Fatalf("host_info has no loopback: %s", r.Raw)
	}
	return lb
}

// startControl serves a tray control endpoint (as the Windows tray does)
// whose Open counts calls; it returns the endpoint's base URL and secret.
func startControl(t *testing.T, anyAccount bool) (url, secret string, opened *atomic.Int64) {
	t.Helper()
	opened = &atomic.Int64{}
	ctl := &tray.Endpoint{Open: func() error { opened.Add(1); return nil }, Quit: func() {}, AnyAccount: anyAccount}
	dir := t.TempDir()
	if err := ctl.Listen(dir); err != nil {
		t.Fatal(err)
	}
	go ctl.Serve()
	t.Cleanup(func() { ctl.Close() })
	var info struct {
		Secret string `json:"secret"`
	}
	b, err := os.ReadFile(filepath.Join(dir, tray.ControlFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	return "http://" + ctl.Addr(), info.Secret, opened
}
