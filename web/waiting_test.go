package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestBrowserWaitingBanner: a call waiting for approval is impossible to
// miss. With Status open, a new call brings, without a reload, a banner
// "ChatGPT is waiting for you: it wants to run echo …" with Allow once,
// Deny and See, and Status's headline says ChatGPT is waiting; the banner
// is on the other pages too (not on Permits, whose cards are the list),
// goes away by itself when the call is decided elsewhere, and its Allow
// once and Deny decide the call.
func TestBrowserWaitingBanner(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask mode: exec needs a permit
	login, err := in.App.NewLoginURLTo("/")
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(in.App.PanelURL(), "/")
	ctx := newBrowser(t, 800, 900)
	problems := watchConsole(ctx)
	shot := screenshots(t, ctx, shotDir(t))
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
	text := func(sel string) string {
		return strings.Join(strings.Fields(eval(`(document.querySelector('`+sel+`')||{}).innerText || ""`)), " ")
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	banner := `[data-testid="waiting-banner"]`

	run("open Status", chromedp.Navigate(login), chromedp.WaitVisible(css(`[data-testid="status-sentence"]`)))
	if eval(`document.querySelector('`+banner+`') ? "yes" : "no"`) != "no" {
		t.Fatal("a banner with nothing waiting")
	}
	eval(`window.hearthMark = "kept"; "ok"`)

	c := hearthtest.Connect(t, in.URL, "conv-banner")
	pid, fid := execNeedingPermit(t, c, "banner one")
	if err := waitFor(ctx, `!!document.querySelector('`+banner+`[data-permit-id="`+pid+`"]')`); err != nil {
		shot("failed-no-banner")
		t.Fatalf("no banner for the waiting call on Status: %v", err)
	}
	if err := waitFor(ctx, `!!document.querySelector('[data-testid="status-waiting"]')`); err != nil {
		shot("failed-no-headline")
		t.Fatalf("Status's headline did not change while a call waits: %v", err)
	}
	shot("banner-status")
	if eval(`window.hearthMark || ""`) != "kept" {
		t.Error("the page was reloaded to show the banner")
	}
	if s := text(banner); !strings.HasPrefix(s, "ChatGPT is waiting for you: it wants to run echo banner one") {
		t.Errorf("the banner says %q", s)
	}
	if s := text(`[data-testid="status-waiting"]`); !strings.HasPrefix(s, "ChatGPT is waiting for you to decide") {
		t.Errorf("Status's headline says %q", s)
	}
	for _, b := range []string{"waiting-allow", "waiting-deny", "waiting-see"} {
		if eval(`document.querySelector('`+banner+` [data-testid="`+b+`"]') ? "yes" : "no"`) != "yes" {
			t.Errorf("the banner lacks %s", b)
		}
	}

	// Decided elsewhere (the tray, another tab): the banner goes by itself.
	if err := in.App.Operator.Approve(context.Background(), pid, "Ann", nil); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, `!document.querySelector('`+banner+`') && !document.querySelector('[data-testid="status-waiting"]')`); err != nil {
		t.Fatalf("the banner stayed after the call was decided: %v", err)
	}
	if env := await(t, c, fid); env["state"] != "completed" {
		t.Fatalf("the allowed call: %v", env)
	}

	// On another page, opened while a call waits, and its Allow once.
	pid, fid = execNeedingPermit(t, c, "banner two")
	run("open Tasks", chromedp.Navigate(base+"/tasks"), chromedp.WaitVisible(css(banner+`[data-permit-id="`+pid+`"]`)))
	shot("banner-tasks")
	run("allow once from the banner", chromedp.Click(css(banner+` [data-testid="waiting-allow"]`)), chromedp.WaitVisible(css(`[data-testid="flash"]`)))
	if s := text(`[data-testid="flash"]`); !strings.Contains(s, "You allowed it once") {
		t.Errorf("after Allow once in the banner the page says %q", s)
	}
	if env := await(t, c, fid); env["state"] != "completed" || hearthtest.Get(env, "result.stdout.text") != "banner two\n" {
		t.Fatalf("the call allowed from the banner: %v", env)
	}

	// The Permits page has the cards, not the banner; Deny from the
	// banner on the Ledger page.
	pid, fid = execNeedingPermit(t, c, "banner three")
	run("open Permits", chromedp.Navigate(base+"/permits"), chromedp.WaitVisible(css(`[data-permit-id="`+pid+`"]`)))
	if eval(`document.querySelector('`+banner+`') ? "yes" : "no"`) != "no" {
		t.Error("the Permits page shows the banner over its own cards")
	}
	run("open Ledger", chromedp.Navigate(base+"/ledger"), chromedp.WaitVisible(css(banner+`[data-permit-id="`+pid+`"]`)))
	run("deny from the banner", chromedp.Click(css(banner+` [data-testid="waiting-deny"]`)), chromedp.WaitVisible(css(`[data-testid="flash"]`)))
	if s := text(`[data-testid="flash"]`); !strings.Contains(s, "You denied it") {
		t.Errorf("after Deny in the banner the page says %q", s)
	}
	if env := await(t, c, fid); env["state"] == "completed" {
		t.Fatalf("the call denied from the banner ran: %v", env)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the browser reported errors (CSP violations show here):\n%s", strings.Join(p, "\n"))
	}
}
