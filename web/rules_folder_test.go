package web_test

import (
	"context"
	"html"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

var cardCwd = regexp.MustCompile(`name="cwd_root" value="([^"]*)"`)

// TestAlwaysAllowWithoutFolderCoversTheShownFolder: a program call that
// names no working folder runs in Hearth's own; its card says so and
// shows that folder, and the card's "Always allow" (posted as the card
// posts it) covers the command there only: the same command without a
// folder then runs without asking, the same command in another folder
// asks.
func TestAlwaysAllowWithoutFolderCoversTheShownFolder(t *testing.T) {
	f := newFixture(t, nil)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	c := hearthtest.Connect(t, f.in.URL, "no-folder")
	pid, _ := execNeedingPermit(t, c, "hello")
	b := f.login(t)
	page := f.get(t, b, "/permits")
	if !strings.Contains(page, `data-testid="permit-cwd-note"`) || !strings.Contains(page, "in <code>"+html.EscapeString(wd)+"</code>") {
		t.Fatalf("the card does not show the folder the call would run in (%s):\n%s", wd, page)
	}
	m := cardCwd.FindStringSubmatch(page)
	if m == nil || html.UnescapeString(m[1]) != wd {
		t.Fatalf("the card's Always allow posts cwd_root %q, want %q", m, wd)
	}
	f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ada", "scope", "always", "program", "echo", "arg", "hello", "cwd_root", html.UnescapeString(m[1]))
	rules, err := f.in.App.Gov.Rules(context.Background())
	if err != nil || len(rules) != 1 || rules[0].CwdRoot != wd {
		t.Fatalf("the rule must cover the card's folder %s: %v %+v", wd, err, rules)
	}
	// Another chat makes the same call (in this one the approved call's
	// answer would answer it again): the rule, on a program outside the
	// argument table, covers exactly `echo hello`.
	c2 := hearthtest.Connect(t, f.in.URL, "no-folder-2")
	if r := c2.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"hello"}}); r.State() != "completed" {
		t.Fatalf("the same command without a folder under the rule must run: %s", r.Raw)
	}
	other := t.TempDir()
	if r := c2.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"hello"}, "cwd": other}); r.State() != "pending" {
		t.Fatalf("the same command in another folder (%s) must ask: %s", other, r.Raw)
	}

	// A form that names no folder at all gets the card's folder too.
	pid, _ = execNeedingPermit(t, c, "again")
	f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ada", "scope", "always", "program", "echo", "arg", "again")
	rules, err = f.in.App.Gov.Rules(context.Background())
	if err != nil || len(rules) != 2 || rules[1].CwdRoot != wd && rules[0].CwdRoot != wd {
		t.Fatalf("a rule without a cwd_root field must cover the card's folder %s: %v %+v", wd, err, rules)
	}
	for _, r := range rules {
		if r.CwdRoot == "" {
			t.Fatalf("a rule covering every folder was made: %+v", r)
		}
	}
}
