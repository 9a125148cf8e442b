package web_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// freeLoopbackAddr returns a loopback address no listener holds now, for
// a Hearth that must come back on the same panel address after a restart.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestBrowserPageKnowsHearthStopped: the Permits page is open and says
// nothing is waiting. Hearth stops: the page says "Hearth is not running"
// and shows nothing it knew before. Hearth starts again on the same
// address and a call waits for approval: the page, whose sign-in ended
// with the old Hearth, says "Sign in again" with the way to sign in, and
// never the stale "Nothing is waiting". Signing in again shows the call.
func TestBrowserPageKnowsHearthStopped(t *testing.T) {
	addr := freeLoopbackAddr(t)
	opts := func(o *app.Options) { o.PanelAddr = addr }
	in := hearthtest.StartWith(t, nil, opts)
	login, err := in.App.NewLoginURLTo("/permits")
	if err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t, 800, 900)
	problems := watchConsole(ctx)
	shots := shotDir(t)
	shot := screenshots(t, ctx, shots)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			shot("failed")
			t.Fatalf("%s: %v", what, err)
		}
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	// shown is the text a person sees on the page (hidden parts left out).
	shown := func() string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	run("open Permits", chromedp.Navigate(login), chromedp.WaitVisible(css(`[data-testid="permits-empty"]`)))
	if s := shown(); strings.Contains(s, "Hearth is not running") || strings.Contains(s, "Sign in again") {
		t.Fatalf("a page of a running Hearth says it is lost:\n%s", s)
	}

	in.Stop()
	if err := waitFor(ctx, `!!document.querySelector('[data-testid="lost-down"]') && document.querySelector('[data-testid="lost-down"]').offsetParent !== null`); err != nil {
		shot("failed-not-running")
		t.Fatalf("the page did not say Hearth is not running: %v", err)
	}
	shot("hearth-stopped")
	s := shown()
	for _, want := range []string{"Hearth is not running", "Open control panel", "hearth-tray serve"} {
		if !strings.Contains(s, want) {
			t.Errorf("with Hearth stopped the page lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "Nothing is waiting") {
		t.Errorf("with Hearth stopped the page still says nothing is waiting:\n%s", s)
	}
	if title, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.title`)); !strings.HasPrefix(title, "Hearth is not running") {
		t.Errorf("tab title with Hearth stopped: %q", title)
	}

	in2 := hearthtest.StartHomeWith(t, in.Home, nil, opts)
	if got := in2.App.PanelURL(); got != in.App.PanelURL() {
		t.Fatalf("Hearth came back at %s, not %s", got, in.App.PanelURL())
	}
	c := hearthtest.Connect(t, in2.URL, "conv-lost")
	pid, _ := execNeedingPermit(t, c, "after the restart")
	if err := waitFor(ctx, `!!document.querySelector('[data-testid="lost-signin"]') && document.querySelector('[data-testid="lost-signin"]').offsetParent !== null`); err != nil {
		shot("failed-sign-in-again")
		t.Fatalf("the page did not say to sign in again: %v\n%s", err, shown())
	}
	// Polls go on; the page stays as it is, whatever they answer.
	time.Sleep(3 * time.Second)
	shot("sign-in-again")
	s = shown()
	for _, want := range []string{"Sign in again", "Open control panel", "hearth-tray serve", "Control panel at"} {
		if !strings.Contains(s, want) {
			t.Errorf("after the restart the page lacks %q:\n%s", want, s)
		}
	}
	for _, stale := range []string{"Nothing is waiting", "Hearth is not running"} {
		if strings.Contains(s, stale) {
			t.Errorf("after the restart, with a call waiting, the page says %q:\n%s", stale, s)
		}
	}

	login2, err := in2.App.NewLoginURLTo("/permits")
	if err != nil {
		t.Fatal(err)
	}
	run("sign in again", chromedp.Navigate(login2), chromedp.WaitVisible(css(`[data-permit-id="`+pid+`"]`)))
	if s := shown(); strings.Contains(s, "Sign in again") {
		t.Errorf("signed in, the page still says to sign in again:\n%s", s)
	}
	shot("signed-in-again")
	for _, p := range problems() {
		// Refused connections and 401s are what this test makes; a CSP
		// violation is not.
		if strings.Contains(p, "Content Security Policy") || strings.Contains(p, "Refused to") {
			t.Errorf("the browser reported a CSP violation: %s", p)
		}
	}
}
