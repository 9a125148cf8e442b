package safety

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/web/ui"
)

func render(t *testing.T, v View) string {
	t.Helper()
	var b strings.Builder
	if err := Page(ui.Chrome{Title: "Safety", Active: "safety", CSRF: "tok", Operator: "Ada"}, v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestReleasedOffersEStop(t *testing.T) {
	html := render(t, View{Status: govern.Status{Mode: "ask"}})
	for _, want := range []string{`data-testid="estop-form"`, `data-testid="estop-reason"`, `data-testid="estop-button"`,
		`data-testid="unknowns-empty"`, `data-testid="policy-current" data-mode="ask">Ask me<`, `<option value="ask" selected>`} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	for _, absent := range []string{`data-testid="reset-form"`, `data-testid="resume-form"`} {
		if strings.Contains(html, absent) {
			t.Errorf("unexpected %q", absent)
		}
	}
}

func TestLatchedOffersTypedReset(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	html := render(t, View{
		Status:   govern.Status{Mode: "trusted", QueueHeld: true, EStop: govern.EStopState{Latched: true, Reason: "smoke <seen>", By: "model", At: at}},
		Unknowns: []govern.Unknown{{CommandID: "cmd_9", Primitive: "fs.write", Route: strings.Repeat("f", 64), CreatedAt: at}},
	})
	for _, want := range []string{`data-testid="reset-form"`, `data-testid="reset-confirm"`, `name="confirm" required`,
		`data-testid="reset-button"`, "smoke &lt;seen&gt;", "Reset the emergency stop above first", `data-testid="reset-resume-button"`,
		`data-testid="unknown" data-command-id="cmd_9"`, `name="command_id" value="cmd_9"`, `data-testid="reconcile-observed"`,
		`<option value="trusted" selected>`} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	for _, absent := range []string{`data-testid="estop-form"`, `data-testid="resume-form"`} {
		if strings.Contains(html, absent) {
			t.Errorf("unexpected %q", absent)
		}
	}
	released := render(t, View{Status: govern.Status{Mode: "ask", QueueHeld: true}})
	if !strings.Contains(released, `data-testid="resume-form"`) {
		t.Error("a held queue after reset offers no resume")
	}
}

// The page names who pressed the e-stop first, in words, and lists later
// presses only as history; a model's reason is shown as its words.
func TestLatchedShowsFirstPressAndHistory(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	html := render(t, View{Status: govern.Status{Mode: "ask", EStop: govern.EStopState{Latched: true, Reason: "it deleted my photos", By: "operator:Ann", At: at,
		Later: []govern.EStopPress{{By: "model", Reason: "safe to reset", At: at.Add(time.Minute)}}}}})
	for _, want := range []string{`data-testid="estop-by">Ann<`, `data-testid="estop-reason-text">it deleted my photos<`,
		`data-testid="estop-later"`, `data-testid="estop-later-press"`, "by ChatGPT: <q>safe to reset</q>"} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	model := render(t, View{Status: govern.Status{Mode: "ask", EStop: govern.EStopState{Latched: true, Reason: "safe to reset", By: "model", At: at}}})
	if !strings.Contains(model, `data-testid="estop-by">ChatGPT<`) || !strings.Contains(model, `ChatGPT's words: <q data-testid="estop-reason-text">safe to reset</q>`) {
		t.Errorf("a model's first press is not attributed as its words:\n%s", model)
	}
}

// TestWorkspacesListed: the Safety page lists the workspaces, each with
// Remove posting to its own address, and says when there are none.
func TestWorkspacesListed(t *testing.T) {
	html := render(t, View{Status: govern.Status{Mode: "ask"}, Workspaces: []govern.Workspace{{ID: "fld_1", Folder: "/home/u/site", CreatedBy: "Ada", CreatedAt: time.Now()}}})
	for _, want := range []string{`data-testid="workspace" data-workspace-id="fld_1"`, "<code>/home/u/site</code>",
		`action="/safety/workspaces/fld_1/remove"`, `data-testid="workspace-remove"`, "may change code and settings without asking"} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	if empty := render(t, View{Status: govern.Status{Mode: "ask"}}); !strings.Contains(empty, `data-testid="workspaces-empty"`) {
		t.Error("no workspaces, and the page does not say so")
	}
}
