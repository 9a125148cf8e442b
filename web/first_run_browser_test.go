package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// besideHearth copies the FAKE tunnel-client into a fresh folder that
// stands for hearth-tray's own (where the Windows package puts the real
// one) and returns that folder.
func besideHearth(t *testing.T) string {
	t.Helper()
	fake := fakeTunnelClient(t)
	dir := t.TempDir()
	b, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(fake)), b, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shotDir is where a browser test keeps its screenshots: the folder
// HEARTH_WALK_SCREENSHOTS names (CI keeps it as an artifact), else a new
// folder that outlives the test; the test prints it.
func shotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HEARTH_WALK_SCREENSHOTS")
	if dir == "" {
		d, err := os.MkdirTemp("", "hearth-walk-")
		if err != nil {
			t.Fatal(err)
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots of every step: %s", dir)
	return dir
}

// writeFile writes a screenshot into dir.
func writeFile(dir, name string, b []byte) error {
	return os.WriteFile(filepath.Join(dir, name), b, 0o644)
}

// newBrowser starts headless Chromium (the flags of the project's browser
// tests) and returns a context for its steps.
func newBrowser(t *testing.T, width, height int) context.Context {
	t.Helper()
	bin := chromium(t)
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
		chromedp.WindowSize(width, height),
	)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(bctx, 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// countLoads counts the documents the tab loads from now on (page load
// events), reloads included.
func countLoads(t *testing.T, ctx context.Context) func() int {
	t.Helper()
	var mu sync.Mutex
	n := 0
	if err := chromedp.Listen(ctx, func(ev any) {
		// The event's type, named without importing cdproto.
		if fmt.Sprintf("%T", ev) == "*page.EventLoadEventFired" {
			mu.Lock()
			n++
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// textOf reads the text of the first element sel matches (its innerText:
// what is rendered) in one script run, waiting up to ten seconds for one
// to exist: the pages update themselves, and a lookup and a read done in
// two steps can meet a node that was replaced in between.
func textOf(ctx context.Context, sel string) (string, error) {
	q, err := json.Marshal(sel)
	if err != nil {
		return "", err
	}
	expr := `(function () { var e = document.querySelector(` + string(q) + `); return e ? [e.innerText] : []; })()`
	var last error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](expr))
		if err == nil && len(v) == 1 {
			return v[0], nil
		}
		last = err
	}
	return "", fmt.Errorf("no %s on the page for 10 s (last error: %v)", sel, last)
}

// waitFor evaluates the expression until it is true, for up to 90 s,
// across the page's own reloads (an evaluation during one fails and is
// tried again).
func waitFor(ctx context.Context, expr string) error {
	deadline := time.Now().Add(90 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return nil
		}
		if err != nil {
			last = err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s still false after 90 s (last error: %v)", expr, last)
}

// TestBrowserFirstRunWalk is a new user's way from a fresh data directory
// to "ChatGPT reached Hearth", in headless Chromium: the sign-in on Setup
// (Status on first run, shown for the eye) → Setup → the tunnel key → the tunnel ID → Connect → the tunnel ready →
// the first call through the tunnel (the FAKE tunnel-client forwards one
// MCP call with _meta["openai/session"], as ChatGPT's come) → Status says
// ChatGPT can reach Hearth. The tunnel program lies beside "hearth-tray",
// as the Windows package puts it. It counts the fields typed and the
// clicks (target: 2 fields, at most 5 clicks) and saves a screenshot of
// every step.
func TestBrowserFirstRunWalk(t *testing.T) {
	dir := besideHearth(t)
	t.Setenv("FAKE_TUNNEL_FORWARD_CALL", "1")
	// Long enough that the ChatGPT half shows while Hearth waits; the
	// test waits for either state, so the length is not a timing bound.
	t.Setenv("FAKE_TUNNEL_FORWARD_AFTER", "3s")
	in := hearthtest.StartWith(t, nil, func(o *app.Options) { o.TunnelProgramDir = dir })
	login, err := in.App.NewLoginURL()
	if err != nil {
		t.Fatal(err)
	}
	// 800 px wide: the panel must read at that width (docs/DESIGN.md, "Words on the panel").
	ctx := newBrowser(t, 800, 900)
	problems := watchConsole(ctx)
	shots := shotDir(t)
	loads := countLoads(t, ctx)
	fields, clicks, pages := 0, 0, 1
	nshot := 0
	shot := func(name string) {
		t.Helper()
		nshot++
		// A page that reloads itself just then has no size for a moment:
		// try again.
		var b []byte
		var err error
		for range 50 {
			if b, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, fmt.Sprintf("%02d-%s.png", nshot, name)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			shot("failed-" + strings.ReplaceAll(what, " ", "-"))
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := textOf(ctx, sel)
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return v
	}
	click := func(sel string) chromedp.Action[chromedp.Void] {
		clicks++
		return chromedp.Click(chromedp.CSS(sel))
	}
	typeIn := func(sel, s string) chromedp.Action[chromedp.Void] {
		fields++
		return chromedp.SendKeys(chromedp.CSS(sel), s)
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	// First run: the sign-in lands on Setup, where there is something to
	// do; Status, opened from the menu (not counted: the walk does not
	// need it), says so in one sentence.
	run("log in", chromedp.Navigate(login), chromedp.WaitVisible(css(`#step-key[data-step-state="current"]`)))
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.HasSuffix(loc, "/setup") {
		t.Fatalf("the first sign-in landed on %s (%v), want Setup", loc, err)
	}
	run("open Status", chromedp.Click(css(`[data-testid="nav-status"]`)), chromedp.WaitVisible(css(`[data-testid="status-sentence"]`)))
	shot("status-first-run")
	if s := text(`[data-testid="status-sentence"]`); !strings.Contains(s, "Finish setting up") {
		t.Fatalf("first-run Status says %q", s)
	}
	run("open Setup", click(`[data-testid="finish-setup"]`), chromedp.WaitVisible(css(`#step-key[data-step-state="current"]`)))
	pages++
	shot("setup-first-run")
	if st := text(`#step-program [data-testid="step-badge"]`); !strings.Contains(st, "done") {
		t.Errorf("the program beside hearth-tray is not shown as found: %q", st)
	}

	key := newRuntimeKey(t)
	run("save the key",
		typeIn(`#tunnel-key`, key),
		click(`[data-testid="key-save"]`),
		chromedp.WaitVisible(css(`#step-key[data-step-state="done"]`)),
		chromedp.WaitVisible(css(`#step-tunnel-id[data-step-state="current"]`)),
		// The clipboard offer works after the htmx swap too.
		chromedp.WaitVisible(css(`[data-testid="clear-clipboard"]`)),
	)
	shot("key-saved")
	if html, err := chromedp.Run(ctx, chromedp.OuterHTML(css(`html`))); err != nil || strings.Contains(html, key) {
		t.Fatalf("the Setup page holds the key (or cannot be read: %v)", err)
	}
	if hint := text(`[data-testid="key-hint"]`); hint != "…"+key[len(key)-4:] {
		t.Errorf("key hint %q", hint)
	}

	run("save the tunnel ID",
		typeIn(`#tunnel-id`, setupTunnelID),
		click(`[data-testid="tunnel-id-save"]`),
		chromedp.WaitVisible(css(`#step-tunnel-id[data-step-state="done"]`)),
		chromedp.WaitVisible(css(`#step-connect[data-step-state="current"] [data-testid="connect-button"]`)),
	)
	shot("tunnel-id-saved")

	run("connect", click(`[data-testid="connect-button"]`), chromedp.WaitVisible(css(`[data-testid="connect-progress"]`)))
	shot("connecting")

	// The page follows by itself (htmx polling, then a reload when the
	// step changes): the ChatGPT half, then the first call.
	if err := waitFor(ctx, `!!document.querySelector('#step-chatgpt[data-step-state="current"] [data-testid="chatgpt-steps"], [data-testid="first-call-seen"]')`); err != nil {
		shot("failed-waiting-for-ready")
		t.Fatalf("the tunnel did not become ready on the page: %v (tunnel %+v)", err, in.App.Tunnel.Status())
	}
	shot("ready-chatgpt-half")
	if err := waitFor(ctx, `!!document.querySelector('[data-phase="done"] [data-testid="first-call-seen"]')`); err != nil {
		shot("failed-waiting-for-first-call")
		t.Fatalf("the first call through the tunnel did not show: %v (first call %v)", err, in.App.Tunnel.FirstChatGPTCall())
	}
	shot("chatgpt-reached-hearth")
	if s := text(`[data-testid="first-call-seen"]`); !strings.Contains(s, "ChatGPT reached Hearth ✓") {
		t.Errorf("last step says %q", s)
	}
	if !in.App.Tunnel.Config().Autostart {
		t.Error("Connect did not turn on connecting whenever Hearth starts")
	}

	run("back to Status", click(`[data-testid="nav-status"]`), chromedp.WaitVisible(css(`[data-testid="status-sentence"][data-ready="true"]`)))
	pages++
	shot("status-reached")
	if s := text(`[data-testid="status-sentence"]`); s != "ChatGPT can reach Hearth" {
		t.Errorf("Status says %q", s)
	}

	t.Logf("first run to \"ChatGPT reached Hearth\": %d fields typed, %d clicks, %d pages opened (Status, Setup, Status; Setup's forms update in place); %d page loads in all (the login's, and Setup reloading itself as its steps change)", fields, clicks, pages, loads())
	if fields != 2 || clicks > 5 {
		t.Errorf("%d fields and %d clicks, want 2 fields and at most 5 clicks", fields, clicks)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the browser reported errors (CSP violations show here):\n%s", strings.Join(p, "\n"))
	}
}

// screenshots returns a function that saves a full-page screenshot of
// ctx's tab as dir/name.png (trying again while the page reloads).
func screenshots(t *testing.T, ctx context.Context, dir string) func(name string) {
	return func(name string) {
		t.Helper()
		var b []byte
		var err error
		for range 50 {
			if b, err = chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err == nil {
			err = writeFile(dir, name+".png", b)
		}
		if err != nil {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
}
