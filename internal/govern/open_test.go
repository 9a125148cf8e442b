//go:build !windows

package govern_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
	"github.com/hearth-dev/hearth/internal/risk"
)

// TestOpenFollowsTheRiskTable: ui.open of a document, a folder or a web
// address is the "open" case in every mode (asks in ask mode, runs when
// trusted, refused read-only), a script is an exec; in ask mode, once the
// operator allowed opening in a conversation, a document and an address
// open there without asking, and still ask in another conversation.
func TestOpenFollowsTheRiskTable(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	doc := filepath.Join(home, "budget.txt")
	script := filepath.Join(home, "setup.ps1")
	for _, f := range []string{doc, script} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	in := hearthtest.Start(t, func(c *config.Config) { c.Roots = []string{home} })
	admit := func(route, input string) risk.Verdict {
		spec, ok := in.App.Registry.Lookup("ui.open")
		if !ok {
			t.Fatal("no ui.open")
		}
		a := dispatch.NewAdmission(dispatch.Request{Route: route, Spec: spec, Input: json.RawMessage(input)}, "")
		return verdictOf(in.App.Gov.Admit(ctx, a))
	}
	docIn := `{"path":` + strconv.Quote(doc) + `}`
	cases := []struct {
		input string
		is    risk.CaseID
	}{
		{docIn, risk.CaseOpen},
		{`{"path":` + strconv.Quote(home) + `}`, risk.CaseOpen},
		{`{"url":"https://example.org/"}`, risk.CaseOpen},
		{`{"path":` + strconv.Quote(script) + `}`, risk.CaseExec},
	}
	for _, mode := range risk.Modes {
		if err := in.App.Operator.SetPolicy(ctx, "alice", mode); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if got, want := admit("r:open-"+mode, c.input), risk.CaseOf(c.is).Verdict(mode); got != want {
				t.Errorf("ui.open %s (%s) in %s: Admit %s, the table says %s", c.input, c.is, mode, got, want)
			}
		}
	}

	if err := in.App.Operator.SetPolicy(ctx, "alice", config.ModeAsk); err != nil {
		t.Fatal(err)
	}
	c := hearthtest.Connect(t, in.URL, "open-grant")
	r := c.Call("ui", map[string]any{"operation": "open", "path": doc})
	pid, _ := r.Get("permit_id").(string)
	if r.State() != "pending" || pid == "" {
		t.Fatalf("the first open in a chat must ask: %s", r.Raw)
	}
	ps, err := in.App.Operator.Permits(ctx, "pending")
	if err != nil || len(ps) == 0 || ps[0].Case != string(risk.CaseOpen) || ps[0].Said != "open files and links on this PC" {
		t.Fatalf("the card must say what opening is: %v %+v", err, ps)
	}
	if err := in.App.Operator.Approve(ctx, pid, "alice", nil); err != nil {
		t.Fatal(err)
	}
	route := mcpserver.Route(map[string]any{"hearth/conversation": "open-grant"})
	for _, input := range []string{docIn, `{"url":"https://example.org/other"}`} {
		if got := admit(route, input); got != risk.Runs {
			t.Errorf("ui.open %s after the operator allowed opening in this chat: %s, want runs", input, got)
		}
	}
	if got := admit(route, `{"path":`+strconv.Quote(script)+`}`); got != risk.Asks {
		t.Errorf("a script after opening was allowed: %s, want asks (an exec)", got)
	}
	// Files that run when opened though no script table named them
	// before: an AutoHotkey or AutoIt script (opened, its interpreter
	// runs it), a macro workbook, a theme, a CLSID name, a launcher.
	for _, name := range []string{"tidy.ahk", "tidy.au3", "book.xlsm", "dark.theme", "notes.txt.{3050F4D8-98B5-11CF-BB82-00AA00BDCE0B}", "app.desktop"} {
		p := filepath.Join(home, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := admit(route, `{"path":`+strconv.Quote(p)+`}`); got != risk.Asks {
			t.Errorf("ui.open of %s after opening was allowed in the chat: %s, want asks (running a program)", name, got)
		}
	}
	if got := admit(mcpserver.Route(map[string]any{"hearth/conversation": "another-chat"}), docIn); got != risk.Asks {
		t.Errorf("opening allowed in one chat must ask in another: %s", got)
	}
}
