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
