package web_test

import (
	"context"
	"database/sql"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/govern/governtest"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// banned are words a person who double-clicked an .exe does not know;
// they may appear only behind "Details" (docs/DESIGN.md, "Words on the panel").
var banned = []*regexp.Regexp{
	regexp.MustCompile(`(?i)sha-?256`),
	regexp.MustCompile(`(?i)\bpin(s|ned|ning)?\b`),
	regexp.MustCompile(`(?i)\bprofiles?\b`),
	regexp.MustCompile(`(?i)\binit\b`),
	regexp.MustCompile(`(?i)\bdoctor\b`),
	regexp.MustCompile(`(?i)\bfutures?\b`),
	regexp.MustCompile(`(?i)not_configured|crash_loop|\bbackoff\b|client_changed|key_refused`),
	regexp.MustCompile(`\br:[0-9a-f]{4,}`),
	regexp.MustCompile(`(?i)tunnel-client`),
	regexp.MustCompile(`(?i)runtime key`),
	regexp.MustCompile(`(?i)inline budget`),
	regexp.MustCompile(`(?i)\bprimitives?\b`),
	regexp.MustCompile(`\bUNKNOWN\b`),
	regexp.MustCompile(`\bMCP\b`),
	regexp.MustCompile(`(?i)\ballow-rules?\b`),
	regexp.MustCompile(`(?i)\bPATH\b`),
	regexp.MustCompile(`(?i)powershell`),
	regexp.MustCompile(`(?i)config\.json`),
	regexp.MustCompile(`(?i)exit code`),
	regexp.MustCompile(`(?i)route[ _]probe`),
	regexp.MustCompile(`(?i)private pipe`),
	regexp.MustCompile(`\(ms\)`),
	regexp.MustCompile(`(?i)host_info`),
	// Safety, Ledger and the ChatGPT window in words (the e-stop is on
	// or off, jobs are paused; who did it is "you" or a name; a call is
	// named by what it asked).
	regexp.MustCompile(`(?i)\blatch(ed|es)?\b`),
	regexp.MustCompile(`(?i)\be-stop\b`),
	regexp.MustCompile(`operator:`),
	regexp.MustCompile(`(?i)\bthe (job )?queue\b`),
	regexp.MustCompile(`(?i)\breset only\b`),
	regexp.MustCompile(`(?i):\s*a call\b`),
	regexp.MustCompile(`\b(permit|tunnel|rule|policy|queue)_[a-z_]+\b`),
	regexp.MustCompile(`(?i)\b(arm|disarm)(ed)? automatic wake\b`),
	regexp.MustCompile(`(?i)\bbound conversations?\b|\bunbind\b`),
	regexp.MustCompile(`(?i)remote-debugging`),
	regexp.MustCompile(`(?i)milliseconds`),
	// Words a person met in a first walk and did not know.
	regexp.MustCompile(`(?i)\bbudget\b`),
	regexp.MustCompile(`(?i)UI Automation`),
	regexp.MustCompile(`(?i)seen first`),
	regexp.MustCompile(`(?i)recorded as made by`),
	regexp.MustCompile(`\bChanges undo(ne)?\b`),
	regexp.MustCompile(`(?i)automatic wake`),
}

var (
	detailsTag = regexp.MustCompile(`(?is)<(/?)details\b[^>]*>`)
	headBlock  = regexp.MustCompile(`(?is)<head>.*?</head>`)
	anyTag     = regexp.MustCompile(`(?s)<[^>]*>`)
	// The connection program's file name is what the user must find, so
	// it may be named (in code) on the main path.
	fileName = regexp.MustCompile(`<code>tunnel-client(\.exe)?</code>`)
)

// mainText is the text a page shows outside every <details> (nested ones
// included), without tags, attributes or the head.
func mainText(page string) string {
	page = headBlock.ReplaceAllString(page, "")
	page = fileName.ReplaceAllString(page, "the program file")
	var b strings.Builder
	depth, last := 0, 0
	for _, m := range detailsTag.FindAllStringSubmatchIndex(page, -1) {
		if depth == 0 {
			b.WriteString(page[last:m[0]])
		}
		if page[m[2]:m[3]] == "/" {
			depth = max(depth-1, 0)
		} else {
			depth++
		}
		last = m[1]
	}
	if depth == 0 {
		b.WriteString(page[last:])
	}
	return html.UnescapeString(anyTag.ReplaceAllString(b.String(), " "))
}

func TestMainTextSkipsDetails(t *testing.T) {
	got := mainText(`<head><title>SHA-256</title></head><p>Trust it <details><summary>Details</summary>its SHA-256 <details>pin</details> init</details> now</p>`)
	if strings.Join(strings.Fields(got), " ") != "Trust it now" {
		t.Fatalf("mainText = %q", got)
	}
}

// checkPlain fails on a banned word on the main path of page.
func checkPlain(t *testing.T, where, page string) {
	t.Helper()
	text := mainText(page)
	if runtime.GOOS != "windows" && strings.Contains(strings.ToLower(text), "recycle bin") {
		t.Errorf("%s: names the Recycle Bin on a system that has none", where)
	}
	for _, re := range banned {
		if m := re.FindString(text); m != "" {
			i := strings.Index(text, m)
			ctx := strings.Join(strings.Fields(text[max(0, i-80):min(len(text), i+80)]), " ")
			t.Errorf("%s: %q outside Details: …%s…", where, m, ctx)
		}
	}
}

// TestPlainLanguage renders every page in its usual states over a real
// Hearth and fails on a banned word outside "Details".
func TestPlainLanguage(t *testing.T) {
	dir := besideHearth(t)
	t.Setenv("FAKE_TUNNEL_FORWARD_CALL", "1")
	f := newFixtureWith(t, nil, func(o *app.Options) { o.TunnelProgramDir = dir })
	b := f.login(t)
	pages := []string{"/", "/setup", "/permits", "/tasks", "/safety", "/ledger", "/recipes", "/changes", "/chatgpt"}
	all := func(state string) {
		t.Helper()
		for _, p := range pages {
			checkPlain(t, state+" "+p, f.get(t, b, p))
		}
	}
	all("first run:")

	// Setup, step by step.
	f.post(t, b, "/setup/key", "key", "short")
	checkPlain(t, "refused key: /setup", f.get(t, b, "/setup"))
	f.post(t, b, "/setup/key", "key", newRuntimeKey(t))
	checkPlain(t, "key saved: /setup", f.get(t, b, "/setup"))
	// Preparing the connection from Details trusts the program beside
	// Hearth by itself: its message stays plain (the file is in Details).
	f.post(t, b, "/setup/init", "tunnel_id", setupTunnelID)
	init := f.get(t, b, "/setup")
	if !strings.Contains(init, "Hearth now trusts the connection program beside it") {
		t.Errorf("the message after preparing the connection does not say the program is trusted now:\n%s", mainText(init))
	}
	checkPlain(t, "after preparing the connection: /setup", init)
	f.post(t, b, "/setup/doctor")
	checkPlain(t, "after the check: /setup", f.get(t, b, "/setup"))
	f.post(t, b, "/setup/tunnel-id", "tunnel_id", "tunnel_xyz")
	checkPlain(t, "bad tunnel ID: /setup", f.get(t, b, "/setup"))
	f.post(t, b, "/setup/tunnel-id", "tunnel_id", setupTunnelID)
	checkPlain(t, "tunnel ID saved: /setup", f.get(t, b, "/setup"))
	f.post(t, b, "/setup/connect")
	checkPlain(t, "connecting: /setup", f.get(t, b, "/setup"))
	waitTunnel(t, f, "ready", func(st tunnel.Status) bool { return st.State == tunnel.StateReady })
	deadline := time.Now().Add(60 * time.Second)
	for f.in.App.Tunnel.FirstChatGPTCall().IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("no first call through the tunnel")
		}
		time.Sleep(20 * time.Millisecond)
	}
	all("connected:")

	// Work and decisions: a permit waiting, a delayed job, a call done,
	// an interrupted action, the e-stop on.
	c := hearthtest.Connect(t, f.in.URL, "conv-plain")
	pid, _ := execNeedingPermit(t, c, "plain")
	// A batch of files that asks: its card's sentence, why it asks and
	// its list (under Details).
	var items []any
	for _, name := range []string{"notes.txt", "tidy.cmd"} {
		p := filepath.Join(f.in.Root, "inbox", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho tidy\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		items = append(items, map[string]any{"from": p, "to": filepath.Join(f.in.Root, "sorted")})
	}
	if r := c.Call("fs", map[string]any{"operation": "move", "items": items}); r.State() != "pending" || r.Get("permit_id") == nil {
		t.Fatalf("a batch moving a program does not ask: %s", r.Raw)
	}
	batch := f.get(t, b, "/permits")
	if !strings.Contains(mainText(batch), "ChatGPT wants to move 2 files from ") || !strings.Contains(mainText(batch), "Hearth asks because of ") {
		t.Errorf("the batch's card does not say it in one sentence:\n%s", mainText(batch))
	}
	checkPlain(t, "permit waiting: /permits", batch)
	checkPlain(t, "permit waiting: /", f.get(t, b, "/"))
	f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ann", "scope", "once")
	sub := c.Call("task", map[string]any{"operation": "submit", "job": map[string]any{"command": "echo", "args": []string{"later"}, "delay_ms": 3_600_000}})
	subPermit, _ := sub.Env["permit_id"].(string)
	if subPermit == "" {
		t.Fatalf("task.submit in ask mode should wait for a permit: %s", sub.Raw)
	}
	checkPlain(t, "job permit waiting: /permits", f.get(t, b, "/permits"))
	f.post(t, b, "/permits/"+subPermit+"/approve", "operator", "Ann", "scope", "once")
	c.Call("machine", map[string]any{"operation": "host_info", "detach": true})
	// The rows read as sentences: a delayed job says when it runs, the
	// ledger says who approved what.
	deadline = time.Now().Add(30 * time.Second)
	for !strings.Contains(f.get(t, b, "/tasks"), "Job echo — runs at ") {
		if time.Now().After(deadline) {
			t.Fatalf("the delayed job does not say when it runs:\n%s", mainText(f.get(t, b, "/tasks")))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if l := f.get(t, b, "/ledger?show=decisions"); !strings.Contains(l, "Ann approved run echo plain") {
		t.Errorf("the ledger does not say who approved what:\n%s", mainText(l))
	}
	ctx := context.Background()
	if err := f.in.App.DB.InTx(ctx, func(tx *sql.Tx) error {
		return governtest.OpenUnknownTx(ctx, tx, "cmd_plain1", "r:0123456789abcdef", "machine.exec", time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	all("with work:")
	if r := f.post(t, b, "/safety/estop", "operator", "Ann", "reason", "test"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("estop: %d", r.StatusCode)
	}
	// A call refused during the e-stop is on the Ledger page, named.
	if r := c.Call("fs", map[string]any{"operation": "write", "path": f.in.Root + "/refused.txt", "data": "x", "expected_sha256": nil}); r.State() != "blocked" {
		t.Fatalf("a write during the e-stop: %s", r.Raw)
	}
	if l := mainText(f.get(t, b, "/ledger")); !strings.Contains(l, "Not allowed, because the emergency stop was on: write a file") {
		t.Errorf("the ledger page leaves out the call refused during the e-stop:\n%s", l)
	}
	all("e-stop on:")
	checkPlain(t, "ledger verified", f.post(t, b, "/ledger/verify").body)
}

// TestPlainLanguageNoProgram: Setup when the connection program is not
// there yet, or changed since it was trusted.
func TestPlainLanguageNoProgram(t *testing.T) {
	f := newFixtureWith(t, nil, func(o *app.Options) { o.TunnelProgramDir = t.TempDir() })
	b := f.login(t)
	page := f.get(t, b, "/setup")
	checkPlain(t, "no program: /setup", page)
	for _, w := range []string{`data-testid="step-program" data-step-state="current"`, `data-testid="program-folder"`, `data-testid="open-folder"`} {
		if !strings.Contains(page, w) {
			t.Errorf("Setup without the program lacks %q", w)
		}
	}
	checkPlain(t, "no program: /setup (open folder)", f.post(t, b, "/setup/open-folder").body+f.get(t, b, "/setup"))
}
