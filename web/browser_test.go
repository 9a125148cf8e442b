package web_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// chromium finds a Chromium binary, or skips the test saying how to get
// one (CI installs Debian's chromium).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium binary on PATH (apt-get install chromium): skipping the headless browser test")
	return ""
}

// watchConsole collects what the page reports as errors until ctx ends:
// exceptions, console errors and browser-log errors, which is where CSP
// violations (an inline script or style, a foreign request) show up.
func watchConsole(ctx context.Context) func() []string {
	var mu sync.Mutex
	var list []string
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				list = append(list, m.String()+" ("+m.Source+" "+m.URL+")")
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), list...)
	}
}

// TestBrowserOperatorFlow drives the panel in headless Chromium as an
// operator would: log in through the one-time URL, approve a permit a real
// MCP client is waiting on, latch the e-stop and see a call refused, reset
// it by typing "reset" and see calls work again. Set
// HEARTH_PANEL_SCREENSHOT to a file path to keep a screenshot of the
// Permits page.
func TestBrowserOperatorFlow(t *testing.T) {
	bin := chromium(t)
	in := hearthtest.Start(t, nil) // ask mode: exec needs a permit
	login, err := in.App.NewLoginURLTo("/")
	if err != nil {
		t.Fatal(err)
	}
	base := in.App.PanelURL()

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
		chromedp.WindowSize(1280, 1024),
	)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	// The first Do starts the browser, on a context without a deadline (a
	// deadline there would stop the browser); the steps get the timeout.
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
	// get runs one action that returns a value.
	get := func(what string, a chromedp.Action[string]) string {
		t.Helper()
		v, err := chromedp.Run(ctx, a)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	// Log in: the one-time URL sets the session and lands on Status.
	run("log in", chromedp.Navigate(login), chromedp.WaitVisible(css(`[data-testid="status-sentence"]`)))
	if got := get("read the MCP URL", chromedp.TextContent(css(`[data-testid="status-mcp-url"]`))); got != in.URL {
		t.Fatalf("status page shows MCP endpoint %q, want %q", got, in.URL)
	}
	htmxReady, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof htmx === "object" && htmx.config.allowEval === false && htmx.config.includeIndicatorStyles === false`))
	if err != nil || !htmxReady {
		t.Fatalf("htmx not loaded or not configured from the meta tag: %v", err)
	}

	// A call waits for a permit; the operator sees it and approves it once.
	c := hearthtest.Connect(t, in.URL, "conv-browser")
	pid, fid := execNeedingPermit(t, c, "hello from the panel")
	card := `[data-permit-id="` + pid + `"]`
	run("open the permit", chromedp.Navigate(base+"permits"), chromedp.WaitVisible(css(card)))
	input := get("read the permit input", chromedp.TextContent(css(card+` [data-testid="permit-input"]`)))
	if !strings.Contains(input, `"hello from the panel"`) || !strings.Contains(input, `"command": "echo"`) {
		t.Fatalf("permit input shown: %q", input)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shotPath := os.Getenv("HEARTH_PANEL_SCREENSHOT")
	if shotPath == "" {
		shotPath = filepath.Join(t.TempDir(), "permits.png")
	}
	if err := os.WriteFile(shotPath, shot, 0o600); err != nil {
		t.Fatal(err)
	}
	// The operator name is filled in (the signed-in user's); it can be
	// changed, and the change is remembered.
	run("open the operator name", chromedp.Click(css(card+` [data-testid="operator-as"] summary`)))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.getElementById("operator-`+pid+`").value = "") === ""`)); err != nil {
		t.Fatal(err)
	}
	run("approve once",
		chromedp.SendKeys(css(`[id="operator-`+pid+`"]`), "Ada"),
		chromedp.Click(css(card+` [data-testid="approve-once"]`)),
		chromedp.WaitVisible(css(`[data-testid="flash"]`)),
		chromedp.WaitVisible(css(`[data-testid="permits-empty"]`)),
	)
	if env := await(t, c, fid); env["state"] != "completed" || hearthtest.Get(env, "result.stdout.text") != "hello from the panel\n" {
		t.Fatalf("approved call's result: %v", env)
	}

	// Emergency stop: the operator name is remembered from the approval.
	run("open safety", chromedp.Navigate(base+"safety"), chromedp.WaitVisible(css(`[data-testid="estop-button"]`)))
	if op := get("read the operator field", chromedp.Value(css(`#estop-operator`))); op != "Ada" {
		t.Errorf("operator field not prefilled with the remembered name: %q", op)
	}
	run("emergency stop",
		chromedp.SendKeys(css(`#estop-reason`), "browser test"),
		chromedp.Click(css(`[data-testid="estop-button"]`)),
		chromedp.WaitVisible(css(`[data-testid="estop-banner"]`)),
		chromedp.WaitVisible(css(`[data-testid="reset-confirm"]`)),
	)
	write := map[string]any{"operation": "write", "path": filepath.Join(in.Root, "after-estop.txt"), "data": "x", "expected_sha256": nil}
	if r := c.Call("fs", write); r.State() != "blocked" || hearthtest.Get(r.Env, "error.code") != "estop" {
		t.Fatalf("a write during the e-stop: %s", r.Raw)
	}

	// Reset needs the typed word.
	run("typed reset",
		chromedp.SendKeys(css(`#reset-confirm`), "reset"),
		chromedp.Click(css(`[data-testid="reset-button"]`)),
		chromedp.WaitVisible(css(`[data-testid="flash"]`)),
		chromedp.WaitVisible(css(`[data-testid="estop-button"]`)),
	)
	if state, err := textOf(ctx, `[data-testid="estop-state"]`); err != nil || !strings.Contains(state, "Off") {
		t.Fatalf("after reset the page says %q (%v)", state, err)
	}
	if r := c.Call("fs", write); r.State() != "completed" {
		t.Fatalf("a write after the reset: %s", r.Raw)
	}

	// The Tasks page updates by itself (htmx polling of the fragment).
	run("tasks page", chromedp.Navigate(base+"tasks"), chromedp.WaitVisible(css(`[data-testid="tasks-live"]`)))
	r := c.Call("machine", map[string]any{"operation": "host_info", "detach": true})
	id, _ := r.Env["future_id"].(string)
	if id == "" {
		t.Fatalf("detached call: %s", r.Raw)
	}
	run("live task row", chromedp.WaitVisible(css(`[data-task-id="`+id+`"]`)))

	// Setup (the tunnel key in its password field, the clipboard offer)
	// is walked by TestBrowserFirstRunWalk.

	// A login link with next (the tray's "Pending permits") lands on
	// that page.
	toPermits, err := in.App.NewLoginURLTo("/permits")
	if err != nil {
		t.Fatal(err)
	}
	run("log in to the Permits page", chromedp.Navigate(toPermits), chromedp.WaitVisible(css(`[data-testid="permits-empty"]`)))
	if loc := get("read the address", chromedp.Location()); loc != base+"permits" {
		t.Errorf("the login link with next=/permits landed on %s", loc)
	}

	if p := problems(); len(p) > 0 {
		t.Errorf("the browser reported errors (CSP violations show here):\n%s", strings.Join(p, "\n"))
	}
}
