package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// connectedHearth is a real Hearth whose setup a person finished: the
// FAKE tunnel-client beside "hearth-tray" (dir) trusted, a key and the
// tunnel ID saved, "connect whenever Hearth starts" on (as Connect
// leaves it) and the tunnel ready.
func connectedHearth(t *testing.T) (in *hearthtest.Instance, client string) {
	t.Helper()
	dir := besideHearth(t)
	in = hearthtest.StartWith(t, nil, func(o *app.Options) { o.TunnelProgramDir = dir })
	sup := in.App.Tunnel
	if err := sup.SetKey(newRuntimeKey(t)); err != nil {
		t.Fatal(err)
	}
	if res, err := sup.Init(t.Context(), setupTunnelID, in.App.MCPURL()); err != nil || !res.OK() {
		t.Fatalf("init: %v %+v", err, res)
	}
	if err := sup.UpdateConfig(func(c *config.Tunnel) error { c.Autostart = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := in.App.StartTunnel(); err != nil {
		t.Fatal(err)
	}
	awaitTunnel(t, sup, tunnel.StateReady)
	pin, ok := sup.Pinned()
	if !ok || filepath.Dir(pin.Path) != dir {
		t.Fatalf("the file beside hearth-tray is not the pin: %+v", pin)
	}
	return in, pin.Path
}

// awaitTunnel waits until the supervisor is in state.
func awaitTunnel(t *testing.T, sup *tunnel.Supervisor, state tunnel.State) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for sup.Status().State != state {
		if time.Now().After(deadline) {
			t.Fatalf("the tunnel is not %s: %+v", state, sup.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBrowserTrustAgainConnects: someone who finished setting up gets a
// new version of the connection program (the file changes; Hearth, at
// its next start, refuses to run it). Status never tells them to "finish
// setting up": it says ChatGPT cannot reach Hearth and what changed.
// On Setup, "Trust this file" connects by itself, since "connect
// whenever Hearth starts" is on: the page ends at "Connected to OpenAI"
// without a Connect to press.
func TestBrowserTrustAgainConnects(t *testing.T) {
	in, client := connectedHearth(t)
	in.App.StopTunnel()
	f, err := os.OpenFile(client, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("a newer version"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// What Hearth's next start does with "connect whenever Hearth starts".
	if err := in.App.StartTunnel(); err == nil {
		t.Fatal("the changed file was started")
	}
	awaitTunnel(t, in.App.Tunnel, tunnel.StateClientChanged)

	login, err := in.App.NewLoginURLTo("/")
	if err != nil {
		t.Fatal(err)
	}
	b := newTab(t, "trust-again")
	problems := watchConsole(b.ctx)
	b.run("open Status", chromedp.Navigate(login), chromedp.WaitVisible(chromedp.CSS(`[data-testid="status-sentence"]`)))
	b.shot("status-program-changed")
	s := b.text()
	if strings.Contains(s, "Finish setting up") || !strings.Contains(s, "ChatGPT cannot reach Hearth: the connection program changed since you trusted it") {
		t.Fatalf("Status, to someone who finished setting up, after the program changed: %s", s)
	}
	b.run("open Setup", chromedp.Click(chromedp.CSS(`[data-testid="status-sentence"] a[href="/setup"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#step-program[data-step-state="current"] [data-testid="trust-button"]`)))
	if s := b.text(); strings.Contains(s, "Finish setting up") {
		t.Fatalf("Setup tells someone who finished to finish setting up: %s", s)
	}
	b.shot("setup-program-changed")
	b.run("trust the new file", chromedp.Click(chromedp.CSS(`[data-testid="trust-button"]`)))
	b.waitFor("connected by itself", `(function () {
	  var e = document.querySelector('[data-testid="connect-state"]');
	  return !!e && /Connected to OpenAI/.test(e.innerText);
	})()`)
	b.shot("connected-again")
	if st := in.App.Tunnel.Status(); st.State != tunnel.StateReady {
		t.Fatalf("the tunnel after the trust: %+v", st)
	}
	if s := b.text(); strings.Contains(s, "Connect needs") || strings.Contains(s, "Finish setting up") {
		t.Fatalf("Setup after the trust: %s", s)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the browser reported errors:\n%s", strings.Join(p, "\n"))
	}
}

// TestBrowserProgramBackUnchanged: the trusted connection program
// disappears (Hearth, at its next start, finds it gone) and comes back
// unchanged while Setup is open. "Check again" is a button that says
// what Hearth sees; the open page sees the file come back by itself,
// with no click and no reload by the person, no longer asks for it, and
// offers the one next step: Connect, which connects.
func TestBrowserProgramBackUnchanged(t *testing.T) {
	in, client := connectedHearth(t)
	in.App.StopTunnel()
	away := client + ".away"
	if err := os.Rename(client, away); err != nil {
		t.Fatal(err)
	}
	if err := in.App.StartTunnel(); err == nil {
		t.Fatal("a gone file was started")
	}
	awaitTunnel(t, in.App.Tunnel, tunnel.StateClientChanged)

	login, err := in.App.NewLoginURLTo("/setup")
	if err != nil {
		t.Fatal(err)
	}
	b := newTab(t, "program-back")
	problems := watchConsole(b.ctx)
	b.run("open Setup", chromedp.Navigate(login), chromedp.WaitVisible(chromedp.CSS(`#step-program[data-step-state="current"] [data-testid="client-missing"]`)))
	b.shot("program-gone")
	if s := b.text(); !strings.Contains(s, "The connection program Hearth trusted is gone") {
		t.Fatalf("Setup with the program gone: %s", s)
	}
	b.run("check again", chromedp.Click(chromedp.CSS(`[data-testid="check-again"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#step-program [data-testid="flash-error"]`)))
	if s, err := textOf(b.ctx, `#step-program [data-testid="flash-error"]`); err != nil || !strings.Contains(s, "Hearth does not see "+tunnel.ClientName()+" in ") {
		t.Fatalf("Check again with the file still gone says %q (%v)", s, err)
	}

	if err := os.Rename(away, client); err != nil {
		t.Fatal(err)
	}
	b.waitFor("the page sees the file back and offers Connect",
		`!!document.querySelector('#step-program[data-step-state="done"]') && !!document.querySelector('#step-connect[data-step-state="current"] [data-testid="connect-button"]')`)
	b.shot("program-back")
	s := b.text()
	if strings.Contains(s, "Hearth needs OpenAI's connection program") || !strings.Contains(s, "The connection program is back, unchanged") {
		t.Fatalf("Setup once the program is back: %s", s)
	}
	if n := primaries(t, b); n != 1 {
		t.Fatalf("%d primary buttons once the program is back, want the one next step", n)
	}
	b.run("connect", chromedp.Click(chromedp.CSS(`[data-testid="connect-button"]`)))
	b.waitFor("connected", `(function () {
	  var e = document.querySelector('[data-testid="connect-state"]');
	  return !!e && /Connected to OpenAI/.test(e.innerText);
	})()`)
	if p := problems(); len(p) > 0 {
		t.Errorf("the browser reported errors:\n%s", strings.Join(p, "\n"))
	}
}

// primaries counts the primary buttons the page shows outside Details.
func primaries(t *testing.T, b *tab) int {
	t.Helper()
	n := b.eval(`String(Array.from(document.querySelectorAll('#setup-steps button, #setup-steps a.button')).filter(function (e) {
	  return !e.closest('details') && !e.classList.contains('secondary') && !e.classList.contains('danger') && e.offsetParent !== null;
	}).length)`)
	var c int
	fmt.Sscan(n, &c)
	return c
}
