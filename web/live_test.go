package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestBrowserLivePermits: with the Permits page open, a new call that
// needs a permit shows up without a reload, in one sentence; the menu
// badge and the tab title follow, on other pages too; Allow once updates
// the list in place. Nothing here waits a fixed time: each check polls
// with a generous deadline.
func TestBrowserLivePermits(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask mode: exec needs a permit
	login, err := in.App.NewLoginURLTo("/permits")
	if err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t, 800, 900)
	problems := watchConsole(ctx)
	shots := shotDir(t)
	shot := func(name string) {
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
			err = writeFile(shots, name+".png", b)
		}
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
	}
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			shot("failed")
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	run("open Permits", chromedp.Navigate(login), chromedp.WaitVisible(css(`[data-testid="permits-empty"]`)))
	// A mark that a reload would wipe.
	eval(`window.hearthMark = "kept"; "ok"`)

	c := hearthtest.Connect(t, in.URL, "conv-live")
	pid, fid := execNeedingPermit(t, c, "live")
	card := `[data-permit-id="` + pid + `"]`
	if err := waitFor(ctx, `!!document.querySelector('`+card+`')`); err != nil {
		shot("failed-no-live-permit")
		t.Fatalf("the new permit did not appear without a reload: %v", err)
	}
	if err := waitFor(ctx, `document.title.startsWith("(1) Permits") && (document.querySelector('[data-testid="nav-pending-count"]')||{}).textContent === "1"`); err != nil {
		t.Fatalf("badge and title did not follow: title %q: %v", eval(`document.title`), err)
	}
	shot("permit-live")
	if eval(`window.hearthMark || ""`) != "kept" {
		t.Fatal("the page was reloaded to show the permit")
	}
	summary := eval(`document.querySelector('` + card + ` [data-testid="permit-summary"]').textContent`)
	if s := strings.Join(strings.Fields(summary), " "); !strings.HasPrefix(s, "ChatGPT wants to run echo live") {
		t.Errorf("permit summary %q", s)
	}
	if chat := eval(`document.querySelector('` + card + ` [data-testid="permit-chat"]').textContent`); !strings.HasPrefix(chat, "the chat begun at ") {
		t.Errorf("the permit's chat is %q", chat)
	}

	run("allow once", chromedp.Click(css(card+` [data-testid="approve-once"]`)))
	if err := waitFor(ctx, `!!document.querySelector('[data-testid="permits-empty"]') && !!document.querySelector('[data-testid="flash"]')`); err != nil {
		t.Fatalf("the list did not update in place after Allow once: %v", err)
	}
	if eval(`window.hearthMark || ""`) != "kept" {
		t.Error("Allow once reloaded the page instead of updating it in place")
	}
	if err := waitFor(ctx, `document.title.startsWith("Permits") && !document.querySelector('[data-testid="nav-pending-count"]')`); err != nil {
		t.Errorf("badge and title kept the count after the decision: %v", err)
	}
	shot("permit-allowed")
	if env := await(t, c, fid); env["state"] != "completed" {
		t.Fatalf("the allowed call: %v", env)
	}

	// On another page the badge and the title follow too.
	run("open Status", chromedp.Navigate(strings.TrimSuffix(in.App.PanelURL(), "/")+"/"), chromedp.WaitVisible(css(`[data-testid="status-sentence"]`)))
	execNeedingPermit(t, c, "second")
	if err := waitFor(ctx, `document.title.startsWith("(1) Status") && (document.querySelector('[data-testid="nav-pending-count"]')||{}).textContent === "1"`); err != nil {
		t.Fatalf("badge and title on Status did not follow: %v", err)
	}
	// The other pages as they look with some work done, for the eye.
	base := strings.TrimSuffix(in.App.PanelURL(), "/")
	for _, p := range []string{"tasks", "ledger", "safety", "recipes"} {
		run("open "+p, chromedp.Navigate(base+"/"+p), chromedp.WaitVisible(css(`[data-testid="page-title"]`)))
		shot("page-" + p)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the browser reported errors (CSP violations show here):\n%s", strings.Join(p, "\n"))
	}
}

// TestBrowserSetupKeepsTyped: a refused tunnel ID is explained in its
// own card, the page is not reloaded and the field keeps what was typed;
// the clipboard offer after the key answers.
func TestBrowserSetupKeepsTyped(t *testing.T) {
	dir := besideHearth(t)
	in := hearthtest.StartWith(t, nil, func(o *app.Options) { o.TunnelProgramDir = dir })
	login, err := in.App.NewLoginURLTo("/setup")
	if err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t, 800, 900)
	problems := watchConsole(ctx)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	run("open Setup", chromedp.Navigate(login), chromedp.WaitVisible(css(`#tunnel-key`)))
	run("save the key",
		chromedp.SendKeys(css(`#tunnel-key`), newRuntimeKey(t)),
		chromedp.Click(css(`[data-testid="key-save"]`)),
		chromedp.WaitVisible(css(`[data-testid="clear-clipboard"]`)),
		chromedp.Click(css(`[data-testid="clear-clipboard"]`)),
	)
	if err := waitFor(ctx, `document.getElementById("clipboard-status").textContent !== ""`); err != nil {
		t.Errorf("the clipboard button did not answer: %v", err)
	}
	eval(`window.hearthMark = "kept"; "ok"`)
	run("a tunnel ID of the wrong format",
		chromedp.SendKeys(css(`#tunnel-id`), "tunnel_not-hex"),
		chromedp.Click(css(`[data-testid="tunnel-id-save"]`)),
		chromedp.WaitVisible(css(`#step-tunnel-id [data-testid="flash-error"]`)),
	)
	if msg := eval(`document.querySelector('#step-tunnel-id [data-testid="flash-error"]').textContent`); !strings.Contains(msg, "only the digits 0 to 9 and the letters a to f") {
		t.Errorf("the refusal says %q", msg)
	}
	if v := eval(`document.getElementById("tunnel-id").value`); v != "tunnel_not-hex" {
		t.Errorf("the field holds %q after the refusal, want what was typed", v)
	}
	if eval(`window.hearthMark || ""`) != "kept" {
		t.Error("the refusal reloaded the page")
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the browser reported errors (CSP violations show here):\n%s", strings.Join(p, "\n"))
	}
}
