package ui

import (
	"context"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/hearth-dev/hearth/web/session"
)

func render(t *testing.T, c templ.Component) string {
	t.Helper()
	var b strings.Builder
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestLayout(t *testing.T) {
	html := render(t, Layout(Chrome{Title: "Tasks", Active: "tasks", CSRF: "t0k", Flash: &session.Flash{Error: true, Text: "no <way>"}}))
	for _, want := range []string{
		`<meta name="htmx-config"`, `&#34;allowEval&#34;:false`, `&#34;includeIndicatorStyles&#34;:false`,
		`<script src="/static/htmx.min.js" defer></script>`, `hx-headers="{&#34;X-CSRF-Token&#34;:&#34;t0k&#34;}"`,
		`data-testid="nav-tasks" aria-current="page"`, `data-testid="flash-error">no &lt;way&gt;<`,
		`<h1 data-testid="page-title">Tasks</h1>`, `class="skip-link" href="#content"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	for _, absent := range []string{`data-testid="estop-banner"`, `data-testid="nav-pending-count"`, `nav-status" aria-current`} {
		if strings.Contains(html, absent) {
			t.Errorf("unexpected %q", absent)
		}
	}
	html = render(t, Layout(Chrome{Title: "Status", Active: "status", EStop: true, EStopBy: "Ann", EStopReason: "because", Pending: 2, Flash: &session.Flash{Text: "done"}}))
	for _, want := range []string{`data-testid="estop-banner"`, "pressed first by Ann: because", `data-testid="nav-pending-count"`, `data-testid="flash">done<`} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
}

// A stop ChatGPT pressed first shows its reason as its words.
func TestEStopBannerQuotesTheModel(t *testing.T) {
	html := render(t, Layout(Chrome{Title: "Status", EStop: true, EStopBy: "ChatGPT", EStopByModel: true, EStopReason: "safe to reset"}))
	if !strings.Contains(html, "pressed first by ChatGPT (its words: <q>safe to reset</q>)") {
		t.Errorf("banner: %s", html)
	}
}

func TestProblemPage(t *testing.T) {
	html := render(t, ProblemPage(ProblemUnauthorized))
	if !strings.Contains(html, `data-testid="unauthorized"`) || !strings.Contains(html, `data-testid="login-help"`) || strings.Contains(html, "<script") {
		t.Errorf("401 page: %s", html)
	}
}
