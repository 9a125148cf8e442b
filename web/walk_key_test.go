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
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// refusalWatch runs in every document the tab loads: once the page has
// swapped in the answer to saving the tunnel key (htmx's afterSwap of
// /setup/key), any refusal of the key the page shows from then on (the
// step's warning, or the lead sentence) is recorded in sessionStorage,
// which lasts across the page's own reloads.
const refusalWatch = `(function () {
  if (window.__refusalWatch) { return; }
  window.__refusalWatch = true;
  function check() {
    if (sessionStorage.getItem("keySaved") !== "1") { return; }
    var lead = document.querySelector('[data-testid="setup-lead-text"]');
    var warn = document.querySelector('[data-testid="key-refused"]');
    if (warn || (lead && /refused/i.test(lead.textContent))) {
      sessionStorage.setItem("refusalSeen", (sessionStorage.getItem("refusalSeen") || "") + " | " + (lead ? lead.textContent : "") + (warn ? " [warning] " + warn.textContent : ""));
    }
  }
  document.addEventListener("htmx:afterSwap", function (e) {
    if (e.detail && e.detail.pathInfo && e.detail.pathInfo.requestPath === "/setup/key") {
      sessionStorage.setItem("keySaved", "1");
    }
    check();
  });
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true });
  check();
  return true;
})()`

// TestBrowserWrongKeyThenRightKey walks Setup in headless Chromium with
// a key OpenAI refuses (the FAKE tunnel-client's control plane refuses
// it) and then the right one, without the user reloading: after the
// right key is saved the page says it is connecting, never shows a
// refusal again, and follows by itself to step 5, which shows the tunnel
// ID to paste in ChatGPT with its copy button.
func TestBrowserWrongKeyThenRightKey(t *testing.T) {
	dir := besideHearth(t)
	wrong, right := newRuntimeKey(t), newRuntimeKey(t)
	refused := filepath.Join(t.TempDir(), "refused-keys")
	if err := os.WriteFile(refused, []byte(wrong+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_TUNNEL_REFUSE_KEYS", refused)
	in := hearthtest.StartWith(t, nil, func(o *app.Options) { o.TunnelProgramDir = dir })
	login, err := in.App.NewLoginURL()
	if err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t, 800, 900)
	problems := watchConsole(ctx)
	shots := shotDir(t)
	loads := countLoads(t, ctx)
	shot := func(name string) {
		t.Helper()
		if b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
			if err := writeFile(shots, "key-"+name+".png", b); err != nil {
				t.Fatal(err)
			}
		}
	}
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			shot("failed-" + strings.ReplaceAll(what, " ", "-"))
			t.Fatalf("%s: %v (tunnel %+v)", what, err, in.App.Tunnel.Status())
		}
	}
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	text := func(sel string) string {
		t.Helper()
		v, err := textOf(ctx, sel)
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return v
	}

	// Until setup is done, the sign-in lands on Setup.
	run("open Setup", chromedp.Navigate(login), chromedp.WaitVisible(css(`#step-key[data-step-state="current"]`)))
	run("save the wrong key", chromedp.SendKeys(css(`#tunnel-key`), wrong), chromedp.Click(css(`[data-testid="key-save"]`)),
		chromedp.WaitVisible(css(`#step-tunnel-id[data-step-state="current"]`)))
	run("save the tunnel ID", chromedp.SendKeys(css(`#tunnel-id`), setupTunnelID), chromedp.Click(css(`[data-testid="tunnel-id-save"]`)),
		chromedp.WaitVisible(css(`#step-connect[data-step-state="current"] [data-testid="connect-button"]`)))
	run("connect", chromedp.Click(css(`[data-testid="connect-button"]`)))
	// The page follows by itself to OpenAI's refusal of the key.
	if err := waitFor(ctx, `!!document.querySelector('#step-key[data-step-state="current"] [data-testid="key-refused"]')`); err != nil {
		shot("failed-waiting-for-refusal")
		t.Fatalf("the refused key did not show: %v (tunnel %+v)", err, in.App.Tunnel.Status())
	}
	shot("refused")
	if lead := text(`[data-testid="setup-lead-text"]`); !strings.Contains(lead, "refused") {
		t.Errorf("with the key refused the page leads with %q", lead)
	}

	// Watch every document from now on, this one included.
	if err := chromedp.Listen(ctx, func(ev any) {
		if fmt.Sprintf("%T", ev) == "*page.EventLoadEventFired" {
			go chromedp.Run(ctx, chromedp.Evaluate[bool](refusalWatch))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](refusalWatch)); err != nil {
		t.Fatal(err)
	}
	before, saved := loads(), time.Now()
	run("save the right key", chromedp.SendKeys(css(`#tunnel-key`), right), chromedp.Click(css(`[data-testid="key-save"]`)),
		chromedp.WaitVisible(css(`#step-key[data-step-state="done"]`)))
	shot("right-key-saved")
	if lead := text(`[data-testid="setup-lead-text"]`); !strings.Contains(lead, "Connecting") && !strings.Contains(lead, "connected") {
		t.Errorf("right after the right key was saved the page leads with %q, want connecting", lead)
	}
	if err := waitFor(ctx, `!!document.querySelector('#step-chatgpt[data-step-state="current"] [data-testid="copy-tunnel-id"]')`); err != nil {
		shot("failed-waiting-for-step-5")
		t.Fatalf("the page did not reach step 5 by itself: %v (tunnel %+v)", err, in.App.Tunnel.Status())
	}
	shot("step-5")
	tookToStep5 := time.Since(saved).Round(100 * time.Millisecond)
	// Read in one script run: the page's own live update may replace the
	// field between a lookup and a read done in two steps.
	offered := `(function () { var e = document.querySelector('[data-testid="copy-tunnel-id"]'); return e ? e.value : "(no field)"; })()`
	if err := waitFor(ctx, offered+` === "`+setupTunnelID+`"`); err != nil {
		addr, _ := chromedp.Run(ctx, chromedp.Evaluate[string](offered))
		t.Errorf("step 5 offers %q to paste (%v), want the tunnel ID %s", addr, err, setupTunnelID)
	}
	// The copy button shows once the page's script found the clipboard.
	if err := waitFor(ctx, `!document.querySelector('[data-testid="copy-button"]').hidden`); err != nil {
		t.Errorf("step 5's copy button stays hidden: %v", err)
	}
	if where := text(`[data-testid="chatgpt-steps"]`); !strings.Contains(where, "Settings") || !strings.Contains(where, "Tunnel") {
		t.Errorf("step 5 does not say where in ChatGPT: %q", where)
	}
	seen, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(sessionStorage.getItem("keySaved") || "") + "/" + (sessionStorage.getItem("refusalSeen") || "")`))
	if err != nil {
		t.Fatal(err)
	}
	if seen != "1/" {
		t.Errorf("after the right key was saved the page showed a refusal (or the watch never armed: %q)", seen)
	}
	t.Logf("from saving the right key to step 5: %s, %d page loads by the page itself, none by the user", tookToStep5, loads()-before)
	if p := problems(); len(p) > 0 {
		t.Errorf("the browser reported errors:\n%s", strings.Join(p, "\n"))
	}
}
