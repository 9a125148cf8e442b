package status

import (
	"context"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/web/ui"
)

func TestStatusView(t *testing.T) {
	var b strings.Builder
	v := View{MCPURL: "http://127.0.0.1:3000/mcp", Mode: "read-only", EStop: govern.EStopState{Latched: true, Reason: "stop", By: "operator:Ada"},
		QueueHeld: true, PendingPermits: 3, OpenUnknowns: 2, LedgerSize: 42, TunnelState: "not_configured", TunnelReason: "no runtime key"}
	c := ui.Chrome{Title: "Status", Active: "status", EStop: true, EStopReason: "stop", Pending: 3}
	if err := Page(c, v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		`data-testid="status-mcp-url">http://127.0.0.1:3000/mcp<`, `data-testid="status-policy-mode">read-only<`,
		`data-testid="status-estop"><span class="state-on">On</span>: stop`, `data-testid="status-queue"><span class="state-on">Paused`,
		`data-testid="status-pending-permits"><a href="/permits">3 requests</a>`, `data-testid="status-sentence">Hearth is running.<`, `no runtime key`, `data-testid="status-tunnel"`, `data-testid="status-unknowns">2<`, `data-testid="status-ledger-size">42<`,
		`hx-get="/status/live" hx-trigger="every 2s"`, `data-testid="estop-banner"`, `data-testid="nav-pending-count"`,
		`data-testid="nav-status" aria-current="page"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
}

// TestStatusSentence: the page leads with one sentence: finish setting up,
// ChatGPT can reach Hearth, or why it cannot.
func TestStatusSentence(t *testing.T) {
	for _, c := range []struct {
		v    View
		want string
	}{
		{View{Reach: true}, `<a href="/setup" data-testid="finish-setup">Finish setting up →</a>`},
		{View{Reach: true, SetupDone: true, Ready: true}, `data-ready="true">ChatGPT can reach Hearth<`},
		{View{Reach: true, SetupDone: true, Sentence: "OpenAI refused the tunnel key: paste it again on the Setup page"},
			`ChatGPT cannot reach Hearth: OpenAI refused the tunnel key: paste it again on the Setup page.`},
	} {
		var b strings.Builder
		if err := Page(ui.Chrome{Title: "Status"}, c.v).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		if !strings.Contains(html, c.want) {
			t.Errorf("%+v: missing %q", c.v, c.want)
		}
		if n := strings.Count(html, `data-testid="status-sentence"`); n != 1 {
			t.Errorf("%+v: %d sentences", c.v, n)
		}
	}
}

// TestModeLabelSaysWhatAsks: the Status page's line for each mode says
// what the risk table makes that mode do with programs, with documents,
// with code and settings in a workspace, and with every other write
// (code, settings, hidden files, programs, persistence places), so
// "asks before it runs a program" alone, or a line that hides that
// writes of anything but documents ask, cannot come back.
func TestModeLabelSaysWhatAsks(t *testing.T) {
	for _, mode := range risk.Modes {
		var b strings.Builder
		if err := Page(ui.Chrome{Title: "Status"}, View{Mode: mode}).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		i := strings.Index(html, `data-testid="status-mode">`)
		if i < 0 {
			t.Fatalf("%s: no mode line", mode)
		}
		line, _, _ := strings.Cut(html[i+len(`data-testid="status-mode">`):], "<")
		line = strings.ToLower(line)
		for _, c := range []struct {
			id    risk.CaseID
			words []string
		}{
			{risk.CaseExec, []string{"program"}},
			{risk.CaseUnusual, []string{"anything but a document", "code", "settings", "hidden", "program", "writes"}},
			{risk.CasePersist, []string{"start by itself"}},
			{risk.CaseWrite, []string{"documents in your folders"}},
			{risk.CaseWriteOK, []string{"workspaces"}},
		} {
			v := risk.CaseOf(c.id).Verdict(mode)
			switch v {
			case risk.Asks:
				if !strings.HasPrefix(line, "asks you before") {
					t.Errorf("%s: the table asks for %s, the line says %q", mode, c.id, line)
				}
				for _, w := range c.words {
					if !strings.Contains(line, w) {
						t.Errorf("%s: the table asks for %s, the line %q does not name %q", mode, c.id, line, w)
					}
				}
			case risk.Runs:
				if !strings.Contains(line, "without asking") {
					t.Errorf("%s: the table runs %s without asking, the line says %q", mode, c.id, line)
				}
				// A mode that asks for some things names what it does not
				// ask for; one that asks for nothing says so at once.
				if !strings.HasPrefix(line, "asks") {
					break
				}
				for _, w := range c.words {
					if !strings.Contains(line, w) {
						t.Errorf("%s: the table runs %s without asking, the line %q does not name %q", mode, c.id, line, w)
					}
				}
			case risk.Refused:
				if !strings.Contains(line, "changes nothing") {
					t.Errorf("%s: the table refuses %s, the line says %q", mode, c.id, line)
				}
			}
		}
	}
}
