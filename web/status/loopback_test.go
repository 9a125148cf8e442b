package status

import (
	"context"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/web/ui"
)

// TestAnyAccountNotice: the Status page says so while loopback_same_user
// is false, and says nothing about it otherwise.
func TestAnyAccountNotice(t *testing.T) {
	for _, anyAccount := range []bool{true, false} {
		var b strings.Builder
		v := View{MCPURL: "http://127.0.0.1:3000/mcp", Mode: "ask", AnyAccount: anyAccount}
		if err := Page(ui.Chrome{Title: "Status", Active: "status"}, v).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		shown := strings.Contains(html, `data-testid="status-any-account"`)
		if shown != anyAccount || anyAccount && !strings.Contains(html, "Every account on this computer can reach Hearth.") {
			t.Errorf("AnyAccount %v: notice shown %v\n%s", anyAccount, shown, html)
		}
	}
}

// TestPortsNotice: the Status page says which port Hearth moved to and
// why, with the addresses behind Details, and nothing when none moved.
func TestPortsNotice(t *testing.T) {
	moved := []PortMove{{Sentence: "Port 3000 was in use by another program, so the MCP endpoint now uses port 49152 (saved in config.json for the next starts).",
		Key: "mcp_addr", Configured: "127.0.0.1:3000", Bound: "127.0.0.1:49152", Cause: "bind: address already in use"}}
	for _, moves := range [][]PortMove{moved, nil} {
		var b strings.Builder
		v := View{MCPURL: "http://127.0.0.1:49152/mcp", Mode: "ask", Ports: moves}
		if err := Page(ui.Chrome{Title: "Status", Active: "status"}, v).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		shown := strings.Contains(html, `data-testid="status-ports"`)
		if shown != (moves != nil) {
			t.Fatalf("moves %v: notice shown %v\n%s", moves, shown, html)
		}
		if moves != nil && (!strings.Contains(html, "Port 3000 was in use by another program") || !strings.Contains(html, "127.0.0.1:3000 → 127.0.0.1:49152")) {
			t.Fatalf("notice lacks the sentence or the addresses:\n%s", html)
		}
	}
}
