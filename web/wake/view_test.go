package wake

import (
	"context"
	"strings"
	"testing"
	"time"

	iwake "github.com/hearth-dev/hearth/internal/wake"
	"github.com/hearth-dev/hearth/web/ui"
)

func render(t *testing.T, v View) string {
	t.Helper()
	var b strings.Builder
	if err := Page(ui.Chrome{Title: "ChatGPT window", Active: "chatgpt", CSRF: "tok", Operator: "Ada"}, v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestPageShowsBindingsAttemptsAndState(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	html := render(t, View{
		Window: iwake.Window{Open: true, Pid: 4242}, Armed: true, Settings: iwake.DefaultSettings(),
		Bindings: []iwake.Binding{{Route: "r:abc", TargetID: "T1", ConvURL: "https://chatgpt.com/c/xyz", BoundAt: at, LastWakeAt: &at, Attempts: 3, GaveUp: true, Live: true}},
		Stats:    iwake.Stats{Wakes: 7, GiveUps: 1},
	})
	for _, want := range []string{`data-testid="window-purpose"`, "process: 4242", `data-testid="disarm-button"`,
		`data-route="r:abc"`, "https://chatgpt.com/c/xyz", "3 of 3", "(gave up)", `name="route" value="r:abc"`,
		"Wakes sent since start: 7", `name="debounce_ms" min="0" max="3600000" value="3000"`} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	for _, absent := range []string{`data-testid="open-form"`, `data-testid="bindings-empty"`, "T1"} {
		if strings.Contains(html, absent) {
			t.Errorf("unexpected %q", absent)
		}
	}
	closed := render(t, View{Window: iwake.Window{Error: "no Edge or Chrome found"}, Settings: iwake.DefaultSettings()})
	for _, want := range []string{`data-testid="open-form"`, "no Edge or Chrome found", `data-testid="arm-button"`, `data-testid="bindings-empty"`} {
		if !strings.Contains(closed, want) {
			t.Errorf("closed window page lacks %q", want)
		}
	}
}
