package permits

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
	c := ui.Chrome{Title: "Permits", Active: "permits", CSRF: "tok123", Operator: "Ada", Pending: len(v.Pending)}
	if err := Page(c, v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func permit(program string) govern.Permit {
	return govern.Permit{
		ID: "pmt_1", Primitive: "machine.exec", Digest: strings.Repeat("ab", 32),
		Input:     `{"command":"` + program + `","args":["-c","echo <hi>"],"cwd":"/srv/app"}`,
		CreatedAt: time.Now(), ExpiresAt: time.Now().Add(15 * time.Minute),
		Programs: []govern.ProgramUse{{Command: program, Cwd: "/srv/app"}},
	}
}

func TestPermitView(t *testing.T) {
	html := render(t, View{Pending: []Item{NewItem(permit("git"))}})
	for _, want := range []string{
		`data-testid="permit" data-permit-id="pmt_1"`,
		`data-testid="permit-primitive">machine.exec<`,
		`data-testid="permit-sha256">` + strings.Repeat("ab", 32) + `<`,
		"&#34;command&#34;: &#34;git&#34;,\n  &#34;args&#34;", // pretty-printed, escaped
		"echo &lt;hi&gt;",
		`data-testid="permit-expires"`, "in 14 minutes",
		`data-testid="permit-programs"`,
		`action="/permits/pmt_1/approve"`, `formaction="/permits/pmt_1/deny"`,
		`data-testid="approve-once"`, `data-testid="approve-always"`, `data-testid="deny"`,
		`name="program" value="git"`, `name="cwd_root" value="/srv/app"`,
		`name="csrf" value="tok123"`, `name="operator" value="Ada" required`,
		`data-testid="rules-empty"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(html, `data-testid="interpreter-warning"`) {
		t.Error("git is not an interpreter, but the page warns")
	}
	if strings.Count(html, "<h1") != 1 {
		t.Error("not exactly one h1")
	}
}

func TestInterpreterWarning(t *testing.T) {
	for _, p := range []string{"powershell.exe", `C:\Windows\System32\cmd.exe`, "/usr/bin/python3", "bash"} {
		html := render(t, View{Pending: []Item{NewItem(permit(p))}})
		if !strings.Contains(html, `data-testid="interpreter-warning"`) {
			t.Errorf("%s: no interpreter warning", p)
		}
	}
	html := render(t, View{Rules: []govern.Rule{
		{ID: "rul_1", Program: "pwsh", Interpreter: true, CreatedBy: "Ada", CreatedAt: time.Now()},
		{ID: "rul_2", Program: "git", CwdRoot: `D:\src`, CreatedBy: "Ada", CreatedAt: time.Now()},
	}})
	if strings.Count(html, `data-testid="rule-interpreter"`) != 1 || strings.Count(html, `data-testid="rule-remove"`) != 2 {
		t.Errorf("rules table:\n%s", html)
	}
	if !strings.Contains(html, `action="/permits/rules/rul_2/remove"`) || !strings.Contains(html, `D:\src`) {
		t.Error("rule row lacks its remove form or cwd root")
	}
	if !strings.Contains(html, `data-testid="permits-empty"`) {
		t.Error("no empty-state for pending permits")
	}
}

// TestPermitSentence: a waiting call reads as a sentence with the three
// choices; the exact input is only behind Details.
func TestPermitSentence(t *testing.T) {
	it := NewItem(permit("git"))
	it.Chat = "the chat begun at 14:02"
	html := render(t, View{Pending: []Item{it}})
	for _, want := range []string{
		`ChatGPT wants to run <code>git -c echo &lt;hi&gt;</code>`, `in <code>/srv/app</code>`,
		`>Allow once<`, `Always allow <code>git</code>`, `here`, `>Deny<`,
		`data-testid="permit-chat">the chat begun at 14:02<`, `Decide in 14 minutes`,
		`data-testid="operator-as"`, `the Ledger keeps your name with it: <strong>Ada</strong>`,
		`hx-get="/permits/live?ids=pmt_1"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	details := strings.Index(html, `data-testid="permit-details"`)
	if details < 0 || strings.Index(html, `data-testid="permit-sha256"`) < details || strings.Index(html, `data-testid="permit-input"`) < details {
		t.Error("the digest and the exact input are not behind Details")
	}
}

// TestAskOnceNote: a permit that covers the rest of the chat says so.
func TestAskOnceNote(t *testing.T) {
	for _, prim := range []string{"ui.screenshot", "ui.clipboard_get"} {
		if it := NewItem(govern.Permit{Primitive: prim, Input: `{}`}); !strings.Contains(it.Note, "again without asking") {
			t.Errorf("%s: note %q", prim, it.Note)
		}
	}
	if it := NewItem(govern.Permit{Primitive: "machine.kill", Input: `{}`}); it.Note != "" {
		t.Errorf("machine.kill: note %q", it.Note)
	}
	html := render(t, View{Pending: []Item{NewItem(govern.Permit{ID: "pmt_1", Primitive: "ui.screenshot", Input: `{}`})}})
	if !strings.Contains(html, "ChatGPT wants to see <code>your screen</code>") || !strings.Contains(html, `data-testid="permit-note">Allowing it lets this chat see your screen again without asking.`) {
		t.Errorf("the screenshot permit card lacks its words or its note:\n%s", html)
	}
	if strings.Contains(render(t, View{Pending: []Item{NewItem(permit("git"))}}), "permit-note") {
		t.Error("a permit for one call shows an ask-once note")
	}
}

func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		p                 govern.Permit
		verb, what, where string
	}{
		{permit("ls"), "run", "ls -c echo <hi>", "/srv/app"},
		{govern.Permit{Primitive: "task.submit", Input: `{}`, Programs: []govern.ProgramUse{{Command: "a"}, {Command: "b"}}}, "run 2 programs:", "a, b", ""},
		{govern.Permit{Primitive: "fs.write", Input: `{"path":"C:\\x.txt"}`}, "use the file", `C:\x.txt`, ""},
		{govern.Permit{Primitive: "ui.act", Input: `{}`}, "do", "act in a window", ""},
		{govern.Permit{Primitive: "ui.screenshot", Input: `{"hwnd":5}`}, "see", "your screen", ""},
		{govern.Permit{Primitive: "ui.clipboard_get", Input: `{}`}, "read", "your clipboard", ""},
		{govern.Permit{Primitive: "machine.session_start", Input: `{"command":"python3","args":["-i"]}`, Programs: []govern.ProgramUse{{Command: "python3"}}}, "start and type into", "python3 -i", ""},
	} {
		verb, what, where := Describe(c.p)
		if verb != c.verb || what != c.what || where != c.where {
			t.Errorf("Describe(%s) = %q %q %q, want %q %q %q", c.p.Primitive, verb, what, where, c.verb, c.what, c.where)
		}
	}
}

// TestPermitCardsSayWhatWouldHappen: a write that makes a program start
// by itself and the first use of an app are asked in plain words, with
// the path or the app on the card.
func TestPermitCardsSayWhatWouldHappen(t *testing.T) {
	persist := govern.Permit{ID: "pmt_2", Primitive: "fs.write", Input: `{"path":"/home/ann/.config/autostart/x.desktop","data":"x"}`,
		CreatedAt: time.Now(), ExpiresAt: time.Now().Add(15 * time.Minute),
		Case: "persist", Subject: "/home/ann/.config/autostart/x.desktop", Said: "make a program start every time you sign in"}
	app := govern.Permit{ID: "pmt_3", Primitive: "ui.action", Input: `{"action":"invoke","process_id":42}`,
		CreatedAt: time.Now(), ExpiresAt: time.Now().Add(15 * time.Minute), Case: "ui_app", Subject: "notepad.exe", Said: "use an app's window"}
	html := render(t, View{Pending: []Item{NewItem(persist), NewItem(app)}})
	for _, want := range []string{
		"ChatGPT wants to make a program start every time you sign in: <code>/home/ann/.config/autostart/x.desktop</code>",
		`data-testid="permit-persist-note"`,
		"ChatGPT wants to use the app <code>notepad.exe</code>",
		`data-testid="permit-app-note"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
}

// TestPersistenceCardNamesWhatRuns: the headline of a card for a file
// that makes a program start by itself names the command the file would
// run, read from the content; the raw input stays under Details; a write
// card has no program allow-list form.
func TestPersistenceCardNamesWhatRuns(t *testing.T) {
	p := govern.Permit{ID: "pmt_2", Primitive: "fs.write", Case: "persist", Subject: "/home/u/.config/autostart/x.desktop",
		Said:      "make a program start every time you sign in",
		Input:     `{"data":"[Desktop Entry]\nExec=/usr/bin/xterm -e sh\n","path":"/home/u/.config/autostart/x.desktop"}`,
		CreatedAt: time.Now(), ExpiresAt: time.Now().Add(15 * time.Minute)}
	html := render(t, View{Pending: []Item{NewItem(p)}})
	start := strings.Index(html, `data-testid="permit-summary"`)
	end := strings.Index(html[start:], "</h3>")
	headline := html[start : start+end]
	for _, want := range []string{"make a program start every time you sign in", `data-testid="permit-runs">/usr/bin/xterm -e sh<`, "/home/u/.config/autostart/x.desktop"} {
		if !strings.Contains(headline, want) {
			t.Errorf("the headline lacks %q: %s", want, headline)
		}
	}
	if strings.Contains(html, `data-testid="permit-rule-form"`) || strings.Contains(html, `data-testid="approve-always"`) {
		t.Error("a write card offers to always allow a program")
	}
}

// TestWorkspaceOffer: a card that offers a workspace has the button
// naming the folder; the page points to the Safety page for the list.
func TestWorkspaceOffer(t *testing.T) {
	p := govern.Permit{ID: "pmt_3", Primitive: "fs.write", Case: "write_unusual", Subject: "/home/u/proj/.gitignore",
		Said: "change a hidden settings file", Input: `{"data":"bin/\n","path":"/home/u/proj/.gitignore"}`,
		CreatedAt: time.Now(), ExpiresAt: time.Now().Add(15 * time.Minute)}
	it := NewItem(p)
	it.Folder = "/home/u/proj"
	html := render(t, View{Pending: []Item{it}})
	for _, want := range []string{"ChatGPT wants to change a hidden settings file: <code>/home/u/proj/.gitignore",
		`name="folder" value="/home/u/proj"`, `data-testid="approve-folder"`, "Allow, and let ChatGPT change code and settings in <code>/home/u/proj</code>",
		`data-testid="workspaces-link"`, `href="/safety#workspaces-heading"`} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
}

// The card's Always allow names the program and the arguments it shows;
// a program that can run others says what the rule covers; a program
// that asks every time has no Always allow.
func TestAlwaysAllowNamesWhatTheCardShows(t *testing.T) {
	p := permit("git")
	p.Input = `{"command":"git","args":["status"],"cwd":"/srv/app"}`
	p.Programs = []govern.ProgramUse{{Command: "git", Args: []string{"status"}, Cwd: "/srv/app"}}
	html := render(t, View{Pending: []Item{NewItem(p)}})
	for _, want := range []string{`Always allow <code>git status</code>`, `name="arg" value="status"`, `data-testid="runs-others-note"`,
		`data-testid="rule-args">status</textarea>`,
		`covers only <code>git status</code> in this folder. Hearth still asks when a call adds settings, another program to run, a file to write or (for git) another address, or sets environment variables.`} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	// A program that sends files or runs words elsewhere: exactly the call.
	p = permit("curl")
	p.Input = `{"command":"curl","args":["https://example.org/status"],"cwd":"/srv/app"}`
	p.Programs = []govern.ProgramUse{{Command: "curl", Args: []string{"https://example.org/status"}, Cwd: "/srv/app"}}
	html = render(t, View{Pending: []Item{NewItem(p)}})
	if want := `<code>curl</code> can send your files or save over them, depending on its arguments`; !strings.Contains(html, want) || !strings.Contains(html, `data-testid="exact-note"`) {
		t.Errorf("the curl card does not say %q in its exact note", want)
	}
	for _, prog := range []string{"bash", "tmux", "/usr/bin/python3"} {
		html := render(t, View{Pending: []Item{NewItem(permit(prog))}})
		if strings.Contains(html, `data-testid="approve-always"`) || strings.Contains(html, `data-testid="permit-rule-form"`) {
			t.Errorf("%s: the card offers Always allow", prog)
		}
		if !strings.Contains(html, `data-testid="interpreter-warning"`) || !strings.Contains(html, "asks you every time") {
			t.Errorf("%s: the card does not say it asks every time", prog)
		}
	}
	rules := render(t, View{Rules: []govern.Rule{{ID: "rul_1", Program: "git", CreatedBy: "Ada", CreatedAt: time.Now()},
		{ID: "rul_2", Program: "git", Args: []string{"status"}, CreatedBy: "Ada", CreatedAt: time.Now()},
		{ID: "rul_3", Program: "rg", CreatedBy: "Ada", CreatedAt: time.Now()},
		{ID: "rul_4", Program: "hg", Narrowed: true, CreatedBy: "Ada", CreatedAt: time.Now()}}})
	if strings.Count(rules, `data-testid="rule-any-git"`) != 1 || !strings.Contains(rules, "any git command, including ones that write anywhere") ||
		strings.Count(rules, `data-testid="rule-any-args"`) != 1 || !strings.Contains(rules, `data-testid="rule-program-cell">git status<`) {
		t.Errorf("rules table:\n%s", rules)
	}
	// A rule narrowed by the migration is marked, and the list says once
	// what that means.
	if strings.Count(rules, `data-testid="rule-narrowed"`) != 1 || strings.Count(rules, `data-testid="rules-narrowed-note"`) != 1 {
		t.Errorf("rules table with a narrowed rule:\n%s", rules)
	}
}

// A session's card offers no Always allow (no rule covers a session) and
// says why; a program outside the argument table says its rule covers
// exactly the call shown, and why when it writes where its arguments say.
func TestSessionCardOffersNoAlwaysAllowAndExactRulesSaySo(t *testing.T) {
	s := permit("git")
	s.Primitive = "machine.session_start"
	s.Input = `{"command":"git","args":["log"],"cwd":"/srv/app"}`
	s.Programs = []govern.ProgramUse{{Command: "git", Args: []string{"log"}, Cwd: "/srv/app"}}
	html := render(t, View{Pending: []Item{NewItem(s)}})
	if strings.Contains(html, `data-testid="approve-always"`) || strings.Contains(html, `data-testid="permit-rule-form"`) {
		t.Error("a session's card offers Always allow")
	}
	if !strings.Contains(html, `data-testid="session-asks-note"`) || !strings.Contains(html, "asks you each time a session starts") {
		t.Error("a session's card does not say it asks each time")
	}
	cp := permit("cp")
	cp.Input = `{"command":"cp","args":["a","b"],"cwd":"/srv/app"}`
	cp.Programs = []govern.ProgramUse{{Command: "cp", Args: []string{"a", "b"}, Cwd: "/srv/app"}}
	html = render(t, View{Pending: []Item{NewItem(cp)}})
	for _, want := range []string{`data-testid="exact-note"`, "<code>cp</code> writes where its arguments say.", "covers exactly <code>cp a b</code>",
		`Always allow <code>cp a b</code>`} {
		if !strings.Contains(html, want) {
			t.Errorf("cp's card: missing %q", want)
		}
	}
	rules := render(t, View{Rules: []govern.Rule{{ID: "rul_1", Program: "ls", CreatedBy: "Ada", CreatedAt: time.Now()}}})
	if !strings.Contains(rules, `data-testid="rule-no-args"`) || strings.Contains(rules, `data-testid="rule-any-args"`) {
		t.Errorf("a rule for ls with no arguments is not shown as that:\n%s", rules)
	}
}
