//go:build !windows

package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/ledger/ledgertest"
)

// TestBrowserUndoAllAndRedo checks a chat's changes are undone and redone
// as the person sees them, on a real Hearth, a real MCP client and the
// real panel in headless Chromium: a chat writes five files (one patched
// twice, one created, one binary), the person edits one of them meanwhile;
// "Undo all changes of this chat" puts three back, moves the created one
// to the trash (the freedesktop trash under the test's XDG_DATA_HOME) and
// lists the edited one as changed since; "Redo" brings all back byte for
// byte. The ledger journals the operator's undo.
// Set HEARTH_CHANGES_SCREENSHOT to a file path to keep a screenshot of the
// page after Undo all.
func TestBrowserUndoAllAndRedo(t *testing.T) {
	bin := chromium(t)
	xdg := t.TempDir()
	t.Setenv("XDG_DATA_HOME", xdg)
	in := hearthtest.Start(t, nil)
	login, err := in.App.NewLoginURLTo("/changes")
	if err != nil {
		t.Fatal(err)
	}

	root := in.Root
	notes, report, patched, created, binary := filepath.Join(root, "notes.txt"), filepath.Join(root, "report.md"),
		filepath.Join(root, "plan.txt"), filepath.Join(root, "new.txt"), filepath.Join(root, "image.png")
	before := map[string][]byte{
		notes:   []byte("notes as the person wrote them\n"),
		report:  []byte("# Report\nfirst draft\n"),
		patched: []byte("step one\nstep two\nstep three\n"),
		binary:  {0x89, 'P', 'N', 'G', 0, 1, 2, 3},
	}
	for p, b := range before {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := hearthtest.Connect(t, in.URL, "conv-changes")
	call := func(args map[string]any) {
		t.Helper()
		if r := c.Call("fs", args); r.State() != "completed" {
			t.Fatalf("fs %v: %s", args["operation"], r.Raw)
		}
	}
	call(map[string]any{"operation": "write", "path": notes, "data": "notes rewritten by ChatGPT\n"})
	call(map[string]any{"operation": "write", "path": report, "data": "# Report\nChatGPT's version\n"})
	call(map[string]any{"operation": "patch", "path": patched, "replacements": []any{map[string]any{"old": "step two", "new": "step 2"}}})
	call(map[string]any{"operation": "patch", "path": patched, "replacements": []any{map[string]any{"old": "step three", "new": "step 3"}}})
	call(map[string]any{"operation": "write", "path": created, "data": "a file ChatGPT made\n", "expected_sha256": nil})
	newBinary := []byte{0x89, 'P', 'N', 'G', 0, 9, 9, 9, 9}
	call(map[string]any{"operation": "write", "path": binary, "data": base64.StdEncoding.EncodeToString(newBinary), "encoding": "base64"})
	after := map[string][]byte{}
	for _, p := range []string{notes, report, patched, created, binary} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		after[p] = b
	}
	// The person edits the report meanwhile.
	edited := []byte("# Report\nmy own edit\n")
	if err := os.WriteFile(report, edited, 0o644); err != nil {
		t.Fatal(err)
	}

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1000, 900),
	)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()
	problems := watchConsole(ctx)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(what, sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	run("log in to Changes", chromedp.Navigate(login), chromedp.WaitVisible(css(`[data-testid="chat-link"]`)))
	if s := text("list sentence", `[data-testid="changes-state"]`); !strings.Contains(s, "1 chat changed files") {
		t.Fatalf("list says %q", s)
	}
	run("open the chat", chromedp.Click(css(`[data-testid="chat-link"]`)), chromedp.WaitVisible(css(`[data-testid="undo-all-button"]`)))
	page := text("chat page", `main`)
	for _, w := range []string{"created new.txt", "edited plan.txt", "rewrote notes.txt", "Not text", "-step two", "+step 2", "new file"} {
		if !strings.Contains(page, w) {
			t.Fatalf("the chat page lacks %q:\n%s", w, page)
		}
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML(css("html")))
	if err != nil {
		t.Fatal(err)
	}
	checkPlain(t, "the chat's changes", html)
	// The report the person edited is neither counted nor offered an
	// undo (the undo would leave it alone); its row says why.
	if s := text("chat sentence", `[data-testid="changes-state"]`); !strings.Contains(s, "4 changes can still be undone") {
		t.Fatalf("the chat's sentence says %q", s)
	}
	reportRow := `[data-testid="change"][data-path="` + report + `"]`
	if s := text("the edited file's row", reportRow); !strings.Contains(s, "changed since (by you") {
		t.Fatalf("the edited file's row says %q", s)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('`+reportRow+` [data-testid="undo-one-form"]').length`)); err != nil || n != 0 {
		t.Fatalf("the edited file is offered an undo (%d, %v)", n, err)
	}
	run("undo all", chromedp.Click(css(`[data-testid="undo-all-button"]`)), chromedp.WaitVisible(css(`[data-testid="undo-report"][data-redo="false"]`)))
	if shotPath := os.Getenv("HEARTH_CHANGES_SCREENSHOT"); shotPath != "" {
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		if err := os.WriteFile(shotPath, shot, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	summary := text("report", `[data-testid="report-summary"]`)
	if !strings.Contains(summary, "3 files put back") || !strings.Contains(summary, "1 file the chat created moved to the trash") || !strings.Contains(summary, "1 file left alone") {
		t.Fatalf("undo report says %q", summary)
	}
	outcome := func(p string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.AttributeValue(css(`[data-testid="report-file"][data-path="`+p+`"]`), "data-outcome"))
		if err != nil {
			t.Fatalf("outcome of %s: %v", p, err)
		}
		return v.Value
	}
	for p, want := range map[string]string{notes: "restored", patched: "restored", binary: "restored", created: "trashed", report: "changed"} {
		if got := outcome(p); got != want {
			t.Fatalf("%s: outcome %q, want %q", p, got, want)
		}
	}
	if r := text("skipped line", `[data-testid="report-file"][data-path="`+report+`"]`); !strings.Contains(r, "changed outside Hearth") {
		t.Fatalf("the skipped file's line says %q", r)
	}
	for p, b := range before {
		want := b
		if p == report {
			want = edited
		}
		if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
			t.Fatalf("after undo %s holds %q, want %q", p, got, want)
		}
	}
	if _, err := os.Stat(created); !os.IsNotExist(err) {
		t.Fatalf("the created file is still in place: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(xdg, "Trash", "files", "new.txt")); err != nil || !bytes.Equal(got, after[created]) {
		t.Fatalf("the trash holds %q (%v)", got, err)
	}

	run("redo", chromedp.Click(css(`[data-testid="redo-button"]`)), chromedp.WaitVisible(css(`[data-testid="undo-report"][data-redo="true"]`)))
	if s := text("redo report", `[data-testid="report-summary"]`); !strings.Contains(s, "Redo: 4 files put back") {
		t.Fatalf("redo report says %q", s)
	}
	for p, want := range after {
		if p == report {
			want = edited
		}
		if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
			t.Fatalf("after redo %s holds %q, want %q", p, got, want)
		}
	}
	html, err = chromedp.Run(ctx, chromedp.OuterHTML(css("html")))
	if err != nil {
		t.Fatal(err)
	}
	checkPlain(t, "the redo report", html)

	// After the redo the chat's changes are in effect again: Undo all is
	// offered, Redo is not.
	run("the chat after the redo", chromedp.Navigate(in.App.PanelURL()+"changes"), chromedp.Click(css(`[data-testid="chat-link"]`)),
		chromedp.WaitVisible(css(`[data-testid="undo-all-button"]`)))
	if s := text("chat sentence after the redo", `[data-testid="changes-state"]`); !strings.Contains(s, "4 changes can still be undone") {
		t.Fatalf("after the redo the chat's sentence says %q", s)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="redo-form"]').length`)); err != nil || n != 0 {
		t.Fatalf("Redo offered after the redo (%d, %v)", n, err)
	}

	// Status says how far back changes can be undone, and the space.
	run("open Status", chromedp.Navigate(in.App.PanelURL()), chromedp.WaitVisible(css(`[data-testid="status-undo"]`)))
	if s := text("status undo line", `[data-testid="status-undo"]`); !strings.Contains(s, "can be undone on the Changes page") || !strings.Contains(s, "set aside for them") {
		t.Fatalf("Status's undo line says %q", s)
	}
	if p := problems(); len(p) > 0 {
		t.Fatalf("browser console problems: %v", p)
	}

	// Journaled as the operator's actions, intent and outcome.
	if n := ledgertest.Count(t, in.App.DB, "changes_undo", "changes_undone"); n != 4 {
		t.Fatalf("ledger has %d operator undo entries, want 4", n)
	}
}
