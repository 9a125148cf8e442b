package app_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/instance"
)

// holdPorts binds two loopback ports as another program would, and
// returns their addresses.
func holdPorts(t *testing.T) (mcp, panel string) {
	t.Helper()
	var addrs []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs[0], addrs[1]
}

// TestStartMovesOffTakenPorts: both configured ports held by another
// program (real listeners): Hearth starts anyway on free ports, serves
// MCP there, publishes the real addresses in instance.json, writes them to
// config.json changing nothing else, and says which port and why.
func TestStartMovesOffTakenPorts(t *testing.T) {
	home := t.TempDir()
	mcpTaken, panelTaken := holdPorts(t)
	hearthtest.WriteConfig(t, home, func(c *config.Config) {
		c.Roots = []string{t.TempDir()}
		c.MCPAddr, c.PanelAddr = mcpTaken, panelTaken
		c.Policy.Mode = config.ModeTrusted
	})
	cfgPath := filepath.Join(home, "config.json")
	before, _ := os.ReadFile(cfgPath)
	h, err := app.Start(context.Background(), app.Options{DataDir: home, ConfigPath: cfgPath, Version: "test", Instance: true})
	if err != nil {
		t.Fatalf("start with both ports taken: %v", err)
	}
	defer h.Stop()
	moves := h.AddrMoves()
	if len(moves) != 2 {
		t.Fatalf("moves %+v, want mcp_addr and panel_addr", moves)
	}
	if !strings.Contains(h.MCPURL(), moves[0].Bound) || strings.Contains(h.MCPURL(), mcpTaken) || moves[0].Key != "mcp_addr" || moves[0].Configured != mcpTaken {
		t.Fatalf("MCP at %s, move %+v", h.MCPURL(), moves[0])
	}
	if !strings.Contains(h.PanelURL(), moves[1].Bound) || moves[1].Key != "panel_addr" || moves[1].Configured != panelTaken {
		t.Fatalf("panel at %s, move %+v", h.PanelURL(), moves[1])
	}
	for _, m := range moves {
		s := m.Sentence()
		_, oldPort, _ := net.SplitHostPort(m.Configured)
		_, newPort, _ := net.SplitHostPort(m.Bound)
		if !m.Saved || !strings.Contains(s, "Port "+oldPort+" was in use by another program") || !strings.Contains(s, "now uses port "+newPort) || !strings.Contains(s, "saved in config.json") {
			t.Fatalf("sentence %q (saved %v %s)", s, m.Saved, m.SaveErr)
		}
	}
	c := hearthtest.Connect(t, h.MCPURL(), "moved")
	if st, r := c.Settled("machine", map[string]any{"operation": "host_info"}); st != "completed" {
		t.Fatalf("host_info on the moved port: %s %s", st, r.Raw)
	}
	c.Session.Close()
	info, err := instance.ReadInfo(home)
	if err != nil || info.MCPURL != h.MCPURL() || info.PanelURL != h.PanelURL() {
		t.Fatalf("instance.json %+v (%v), serving at %s and %s", info, err, h.MCPURL(), h.PanelURL())
	}
	after, _ := os.ReadFile(cfgPath)
	want := strings.NewReplacer(`"`+mcpTaken+`"`, `"`+moves[0].Bound+`"`, `"`+panelTaken+`"`, `"`+moves[1].Bound+`"`).Replace(string(before))
	if string(after) != want {
		t.Fatalf("config.json after the move:\n%s\nwant only the two addresses changed:\n%s", after, want)
	}
	if h.Config.MCPAddr != moves[0].Bound || h.Config.PanelAddr != moves[1].Bound {
		t.Fatalf("running config %s %s", h.Config.MCPAddr, h.Config.PanelAddr)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	// The next start finds the saved ports free and moves nothing.
	h2, err := app.Start(context.Background(), app.Options{DataDir: home, ConfigPath: cfgPath, Version: "test", Instance: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Stop()
	if len(h2.AddrMoves()) != 0 || !strings.Contains(h2.MCPURL(), moves[0].Bound) {
		t.Fatalf("restart: moves %+v at %s, want none at %s", h2.AddrMoves(), h2.MCPURL(), moves[0].Bound)
	}
}

// TestExplicitAddrTakenFails: an address given on the command line is the
// user's choice: taken, the start fails saying so, names the flag, and
// config.json is not touched.
func TestExplicitAddrTakenFails(t *testing.T) {
	home := t.TempDir()
	mcpTaken, panelTaken := holdPorts(t)
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.Roots = []string{t.TempDir()} })
	cfgPath := filepath.Join(home, "config.json")
	before, _ := os.ReadFile(cfgPath)
	for _, tc := range []struct{ mcp, panel, flag string }{
		{mcpTaken, "127.0.0.1:0", "--mcp-addr"},
		{"127.0.0.1:0", panelTaken, "--panel-addr"},
	} {
		_, err := app.Start(context.Background(), app.Options{DataDir: home, ConfigPath: cfgPath, MCPAddr: tc.mcp, PanelAddr: tc.panel, Version: "test", Instance: true})
		var pt *app.PortTakenError
		if !errors.As(err, &pt) || pt.Flag != tc.flag || !strings.Contains(err.Error(), "in use by another program") || !strings.Contains(err.Error(), tc.flag) {
			t.Fatalf("%s taken: %v, want a PortTakenError naming it", tc.flag, err)
		}
	}
	if after, _ := os.ReadFile(cfgPath); string(after) != string(before) {
		t.Fatalf("config.json changed:\n%s", after)
	}
}

// TestSecondHearthOnTheSamePortsIsNotMoved: the configured ports held by
// a Hearth of the same data directory are not "another program": a second
// start answers instance.ErrAlreadyRunning (then serve reports the first
// one and the tray opens its panel) and moves nothing; config.json stays
// as it was.
func TestSecondHearthOnTheSamePortsIsNotMoved(t *testing.T) {
	home := t.TempDir()
	var free []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		free = append(free, ln.Addr().String())
		ln.Close()
	}
	hearthtest.WriteConfig(t, home, func(c *config.Config) {
		c.Roots = []string{t.TempDir()}
		c.MCPAddr, c.PanelAddr = free[0], free[1]
	})
	cfgPath := filepath.Join(home, "config.json")
	before, _ := os.ReadFile(cfgPath)
	o := app.Options{DataDir: home, ConfigPath: cfgPath, Version: "test", Instance: true}
	ctx := context.Background()
	h, err := app.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	if len(h.AddrMoves()) != 0 || !strings.Contains(h.MCPURL(), free[0]) {
		t.Fatalf("first start on free ports moved: %+v", h.AddrMoves())
	}
	if _, err := app.Start(ctx, o); !errors.Is(err, instance.ErrAlreadyRunning) {
		t.Fatalf("second start: %v, want instance.ErrAlreadyRunning", err)
	}
	if after, _ := os.ReadFile(cfgPath); string(after) != string(before) {
		t.Fatalf("config.json changed:\n%s", after)
	}
}
