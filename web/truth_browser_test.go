package web_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/web/safety"
)

// tab is one headless Chromium tab of a truth test, with the steps the
// tests share; a failing step keeps a screenshot.
type tab struct {
	t     *testing.T
	ctx   context.Context
	shots string
	name  string
	// problems is what the page reported as errors (openTab's tabs).
	problems func() []string
}

func newTab(t *testing.T, name string) *tab {
	t.Helper()
	return &tab{t: t, ctx: newBrowser(t, 800, 900), shots: shotDir(t), name: name}
}

// openTab is a tab named name logged in to in's panel at path, watching
// the page's console (checkConsole) from the start; ready are the steps
// after the navigation that make the page ready (a WaitVisible).
func openTab(t *testing.T, in *hearthtest.Instance, name, path string, ready ...chromedp.Action[chromedp.Void]) *tab {
	t.Helper()
	login, err := in.App.NewLoginURLTo(path)
	if err != nil {
		t.Fatal(err)
	}
	b := newTab(t, name)
	b.problems = watchConsole(b.ctx)
	b.run("open "+path, append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(login)}, ready...)...)
	return b
}

// checkConsole fails the test if the page of an openTab tab reported
// errors (an exception, a console error, a CSP violation).
func (b *tab) checkConsole() {
	b.t.Helper()
	if p := b.problems(); len(p) > 0 {
		b.t.Errorf("the browser reported errors:\n%s", strings.Join(p, "\n"))
	}
}

func (b *tab) shot(what string) {
	b.t.Helper()
	var png []byte
	var err error
	for range 50 {
		if png, err = chromedp.Run(b.ctx, chromedp.FullScreenshot(100)); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err == nil {
		err = writeFile(b.shots, b.name+"-"+what+".png", png)
	}
	if err != nil {
		b.t.Errorf("screenshot %s: %v", what, err)
	}
}

func (b *tab) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.shot("failed")
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *tab) eval(expr string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

func (b *tab) waitFor(what, expr string) {
	b.t.Helper()
	if err := waitFor(b.ctx, expr); err != nil {
		b.shot("failed")
		b.t.Fatalf("%s: %v", what, err)
	}
}

// text is the page's visible text, in one line.
func (b *tab) text() string {
	b.t.Helper()
	return strings.Join(strings.Fields(b.eval(`document.body.innerText`)), " ")
}

// TestBrowserPermitDuringEStop: a permit allowed during the e-stop runs
// nothing, and the card says so. In headless Chromium
// over a real Hearth: a Permits tab opened before the emergency stop
// still shows Allow once; clicked right after the stop was pressed (the
// tray, another tab), the card answers that nothing was allowed — never
// "You allowed it: Hearth will run …" — and the request keeps waiting.
// The open tab then follows by itself: the card says nothing runs until
// the stop is reset and has no Allow; the banner on other pages has no
// Allow either. After the reset on the Safety page, Allow once works and
// ChatGPT's call runs.
func TestBrowserPermitDuringEStop(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask mode: exec needs a permit
	base := strings.TrimSuffix(in.App.PanelURL(), "/")
	b := openTab(t, in, "estop-permit", "/permits", chromedp.WaitVisible(chromedp.CSS(`[data-testid="permits-empty"]`)))
	c := hearthtest.Connect(t, in.URL, "conv-estop-browser")
	pid, fid := execNeedingPermit(t, c, "held")
	card := `[data-permit-id="` + pid + `"]`
	b.waitFor("the card with Allow once", `!!document.querySelector('`+card+` [data-testid="approve-once"]')`)
	// Whatever the page shows from the stop on, it never says the call
	// will run or was allowed.
	b.eval(`window.__sawRun = ""; new MutationObserver(function () {
	  var s = document.body.innerText;
	  if (/Hearth will run|You allowed it/.test(s)) { window.__sawRun += " | " + s.replace(/\s+/g, " "); }
	}).observe(document.body, {subtree: true, childList: true, characterData: true}); "armed"`)

	// The stop is pressed elsewhere; this tab still shows Allow once and
	// the person clicks it before the list has followed.
	if err := in.App.Operator.EStop(t.Context(), "Ann", "truth test"); err != nil {
		t.Fatal(err)
	}
	clicked := b.eval(`(function () {
	  var btn = document.querySelector('` + card + ` [data-testid="approve-once"]');
	  if (!btn) { return "gone"; }
	  btn.click();
	  return "clicked";
	})()`)
	if clicked == "clicked" {
		b.waitFor("the answer to Allow during the stop", `!!document.querySelector('#permits-live [data-testid="flash-error"], #permits-live [data-testid="flash"]')`)
		b.shot("allow-clicked-during-stop")
		got := b.eval(`document.querySelector('#permits-live [data-testid="flash-error"], #permits-live [data-testid="flash"]').textContent`)
		if !strings.Contains(got, "Nothing was allowed") || strings.Contains(got, "Hearth will run") || strings.Contains(got, "You allowed it") {
			t.Errorf("Allow clicked during the stop answers %q", got)
		}
	} else {
		// The list followed within the few milliseconds since the stop:
		// the stale click cannot be tried this time.
		t.Log("the card had already lost Allow when the test clicked it")
	}
	if ps, err := in.App.Operator.Permits(t.Context(), "pending"); err != nil || len(ps) != 1 || ps[0].ID != pid {
		t.Fatalf("during the stop the request must keep waiting: %+v %v", ps, err)
	}

	// The open tab follows by itself: no Allow, and why.
	b.waitFor("the card without Allow during the stop", `!!document.querySelector('`+card+` [data-testid="permit-estop"]') && !document.querySelector('`+card+` [data-testid="approve-once"]') && !document.querySelector('`+card+` [data-testid="approve-always"]') && !!document.querySelector('[data-testid="permits-estop"]')`)
	b.shot("card-during-stop")
	if s := b.eval(`document.querySelector('` + card + ` [data-testid="permit-estop"]').textContent`); !strings.Contains(s, "Nothing runs until you reset the emergency stop") {
		t.Errorf("the card during the stop says %q", s)
	}
	if saw := b.eval(`window.__sawRun`); saw != "" {
		t.Errorf("during the stop the Permits page said the call would run or was allowed: %s", saw)
	}

	// Another page: the banner says the same and offers no Allow.
	b.run("open Status", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="waiting-banner"]`)))
	b.shot("banner-during-stop")
	if b.eval(`String(!!document.querySelector('[data-testid="waiting-estop"]') && !document.querySelector('[data-testid="waiting-allow"]'))`) != "true" {
		t.Errorf("during the stop the waiting banner offers Allow or does not say why not: %s", b.text())
	}
	if s := b.text(); strings.Contains(s, "Hearth will run") || strings.Contains(s, "You allowed it") {
		t.Errorf("during the stop Status says: %s", s)
	}

	// Reset on the Safety page, as a person does; then Allow works.
	b.run("reset the stop", chromedp.Navigate(base+"/safety"), chromedp.WaitVisible(chromedp.CSS(`#reset-confirm`)),
		chromedp.SendKeys(chromedp.CSS(`#reset-confirm`), safety.ResetWord),
		chromedp.Click(chromedp.CSS(`[data-testid="reset-button"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="estop-button"]`)))
	b.run("open Permits after the reset", chromedp.Navigate(base+"/permits"), chromedp.WaitVisible(chromedp.CSS(card+` [data-testid="approve-once"]`)))
	if b.eval(`String(!!document.querySelector('[data-testid="permit-estop"], [data-testid="permits-estop"]'))`) != "false" {
		t.Error("after the reset the card still says the stop is on")
	}
	b.run("allow once after the reset", chromedp.Click(chromedp.CSS(card+` [data-testid="approve-once"]`)))
	b.waitFor("the answer to Allow after the reset", `!!document.querySelector('#permits-live [data-testid="flash"]') && !!document.querySelector('[data-testid="permits-empty"]')`)
	b.shot("allowed-after-reset")
	if got := b.eval(`document.querySelector('#permits-live [data-testid="flash"]').textContent`); !strings.Contains(got, "You allowed it") {
		t.Errorf("Allow after the reset answers %q", got)
	}
	if env := await(t, c, fid); env["state"] != "completed" || hearthtest.Get(env, "result.stdout.text") != "held\n" {
		t.Fatalf("allowed after the reset, the call ended %v", env)
	}
	b.checkConsole()
}

// greenWatch runs in every document the Setup tab loads once armed: any
// sign of success the page shows — a ✓, "Started", a progress line marked
// done, a green confirmation in the Connect card, the Connect step done — is recorded in
// sessionStorage (which lasts across the page's own reloads) until the
// refusal of the key shows.
const greenWatch = `(function () {
  if (window.__greenWatch) { return true; }
  window.__greenWatch = true;
  ` + watchedText + `
  function check() {
    if (sessionStorage.getItem("armed") !== "1" || sessionStorage.getItem("refusedSeen") === "1" || !document.body) { return; }
    var seen = [];
    var text = watchedText();
    if (text.indexOf("✓") >= 0) { seen.push("a ✓"); }
    if (/\bStarted\b/.test(text)) { seen.push("Started"); }
    if (document.querySelector('[data-ok="true"]')) { seen.push("a progress line marked done"); }
    if (document.querySelector('#step-connect[data-step-state="done"]')) { seen.push("the Connect step done"); }
    document.querySelectorAll("#step-connect .flash.ok").forEach(function (f) { seen.push("a confirmation: " + f.textContent.trim()); });
    if (seen.length) {
      sessionStorage.setItem("greenSeen", (sessionStorage.getItem("greenSeen") || "") + " | " + seen.join("; "));
    }
    if (document.querySelector('[data-testid="key-refused"]')) { sessionStorage.setItem("refusedSeen", "1"); }
  }
  new MutationObserver(check).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  check();
  return true;
})()`

// watchedText defines watchedText(): the text of the lead sentence and
// of every step card that was not done before Connect (sessionStorage's
// "doneBefore" lists those: the program, the key and the tunnel ID, whose
// "✓ done" is true, as they are saved).
const watchedText = `function watchedText() {
    var done = (sessionStorage.getItem("doneBefore") || "").split(" ");
    var parts = [];
    var lead = document.querySelector('[data-testid="setup-lead-text"]');
    if (lead) { parts.push(lead.innerText); }
    document.querySelectorAll('[data-step-state]').forEach(function (el) {
      if (done.indexOf(el.id) < 0) { parts.push(el.innerText); }
    });
    return parts.join("\n");
  }`

// TestBrowserRefusedKeyNeverFlashesGreen: a refused key never shows as
// success, not even for a moment. It walks Setup in
// headless Chromium with the FAKE tunnel-client's control plane refusing
// every key: from the click on Connect until the refusal shows, every
// change of every document the tab loads is checked, and none shows a ✓,
// "Started", a green confirmation or a done step.
func TestBrowserRefusedKeyNeverFlashesGreen(t *testing.T) {
	dir := besideHearth(t)
	t.Setenv("FAKE_TUNNEL_REFUSE_KEY", "1")
	in := hearthtest.StartWith(t, nil, func(o *app.Options) { o.TunnelProgramDir = dir })
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	b := openTab(t, in, "refused-key", "/setup", chromedp.WaitVisible(css(`#tunnel-key`)))
	b.run("save the key", chromedp.SendKeys(css(`#tunnel-key`), newRuntimeKey(t)), chromedp.Click(css(`[data-testid="key-save"]`)),
		chromedp.WaitVisible(css(`#step-tunnel-id[data-step-state="current"]`)))
	b.run("save the tunnel ID", chromedp.SendKeys(css(`#tunnel-id`), setupTunnelID), chromedp.Click(css(`[data-testid="tunnel-id-save"]`)),
		chromedp.WaitVisible(css(`#step-connect[data-step-state="current"] [data-testid="connect-button"]`)))

	// Arm the watch in this document and every one loaded from now on.
	if err := chromedp.Listen(b.ctx, func(ev any) {
		if fmt.Sprintf("%T", ev) == "*page.EventDomContentEventFired" || fmt.Sprintf("%T", ev) == "*page.EventLoadEventFired" {
			go chromedp.Run(b.ctx, chromedp.Evaluate[bool](greenWatch))
		}
	}); err != nil {
		t.Fatal(err)
	}
	b.eval(`sessionStorage.setItem("doneBefore", Array.from(document.querySelectorAll('[data-step-state="done"]')).map(function (el) { return el.id; }).join(" ")); "ok"`)
	if done := b.eval(`sessionStorage.getItem("doneBefore")`); strings.Contains(done, "step-connect") || !strings.Contains(done, "step-key") {
		t.Fatalf("the steps done before Connect: %q", done)
	}
	b.eval(`sessionStorage.setItem("armed", "1"); sessionStorage.removeItem("greenSeen"); "ok"`)
	b.eval(`String(` + greenWatch + `)`)
	b.run("connect", chromedp.Click(css(`[data-testid="connect-button"]`)))
	// From Go too, as often as the page can be read, until the refusal.
	var seen []string
	deadline := time.Now().Add(90 * time.Second)
	for n := 0; ; n++ {
		v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(function () {
		  if (document.querySelector('#step-key[data-step-state="current"] [data-testid="key-refused"]')) { return "refused"; }
		  `+watchedText+`
		  var t = watchedText();
		  var out = [];
		  if (t.indexOf("✓") >= 0) { out.push("a ✓"); }
		  if (/\bStarted\b/.test(t)) { out.push("Started"); }
		  if (document.querySelector('[data-ok="true"], #step-connect[data-step-state="done"], #step-connect .flash.ok')) { out.push("green"); }
		  return out.join("; ");
		})()`))
		if err == nil && v == "refused" {
			t.Logf("the refusal showed after %d samples", n)
			break
		}
		if err == nil && v != "" && !slices.Contains(seen, v) {
			seen = append(seen, v)
			b.shot(fmt.Sprintf("green-before-refusal-%d", len(seen)))
		}
		if time.Now().After(deadline) {
			b.shot("failed-waiting-for-refusal")
			t.Fatalf("the refusal did not show (tunnel %+v)", in.App.Tunnel.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.shot("refused")
	if len(seen) > 0 {
		t.Errorf("before the refusal the Setup page showed: %s", strings.Join(seen, " | "))
	}
	got := b.eval(`(sessionStorage.getItem("armed") || "") + "/" + (sessionStorage.getItem("refusedSeen") || "") + "/" + (sessionStorage.getItem("greenSeen") || "")`)
	if got != "1/1/" {
		t.Errorf("from Connect to the refusal the page showed (armed/refusal seen/what): %q", got)
	}
	if lead := b.text(); !strings.Contains(lead, "refused") {
		t.Errorf("with the key refused the page says: %s", lead)
	}
	b.checkConsole()
}

// TestBrowserDeniedNotAskedAgain: a denied request is not asked again
// until the person says so. In headless Chromium
// over a real Hearth and a real MCP client: after Deny on the open
// Permits tab, ChatGPT's identical retry is answered no at once and the
// tab shows no new card (watched over several of its live updates), only
// the denial with Ask again; Ask again ends that, and the next identical
// call shows its card live.
func TestBrowserDeniedNotAskedAgain(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask mode: exec needs a permit
	css := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	b := openTab(t, in, "denied", "/permits", chromedp.WaitVisible(css(`[data-testid="permits-empty"]`)))
	c := hearthtest.Connect(t, in.URL, "conv-denied-browser")
	pid, fid := execNeedingPermit(t, c, "no")
	card := `[data-testid="permit"][data-permit-id="` + pid + `"]`
	b.waitFor("the card", `!!document.querySelector('`+card+` [data-testid="deny"]')`)
	b.run("deny", chromedp.Click(css(card+` [data-testid="deny"]`)))
	b.waitFor("the denial listed", `!!document.querySelector('[data-testid="denied-item"][data-permit-id="`+pid+`"] [data-testid="ask-again"]') && !!document.querySelector('[data-testid="permits-empty"]')`)
	if env := await(t, c, fid); env["state"] != "blocked" {
		t.Fatalf("the denied call ended %v", env)
	}
	// A mark that a reload would wipe, and a watch for any card.
	b.eval(`window.__mark = "kept"; window.__cards = ""; new MutationObserver(function () {
	  document.querySelectorAll('[data-testid="permit"]').forEach(function (c) { window.__cards += " " + c.getAttribute("data-permit-id"); });
	}).observe(document.body, {subtree: true, childList: true}); "armed"`)

	// ChatGPT asks for exactly the same again: no at once, with the denial.
	start := time.Now()
	retry := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"no"}})
	took := time.Since(start)
	if retry.State() != "blocked" || retry.Get("error.code") != "permit_denied" || retry.Env["permit_id"] != nil {
		t.Errorf("the denied call asked again must be answered no at once: %s", retry.Raw)
	}
	t.Logf("the retry was answered in %s: %v", took.Round(time.Millisecond), retry.Get("error.message"))
	// Three of the tab's live updates (every 2 s): still no card.
	time.Sleep(7 * time.Second)
	b.shot("after-retry")
	if got := b.eval(`window.__mark + "/" + window.__cards + "/" + document.querySelectorAll('[data-testid="permit"]').length + "/" + !!document.querySelector('[data-testid="nav-pending-count"]')`); got != "kept//0/false" {
		t.Fatalf("after the retry the open tab (mark/cards seen/cards/badge): %q", got)
	}
	if s := b.eval(`document.querySelector('[data-testid="denied-item"][data-permit-id="` + pid + `"]').textContent`); !strings.Contains(strings.Join(strings.Fields(s), " "), "you denied it") {
		t.Errorf("the denial reads %q", s)
	}

	// Ask again ends it: the next identical call asks, live.
	b.run("ask again", chromedp.Click(css(`[data-testid="denied-item"][data-permit-id="`+pid+`"] [data-testid="ask-again"]`)))
	b.waitFor("the answer to Ask again", `!document.querySelector('[data-testid="denied-item"]') && !!document.querySelector('#permits-live [data-testid="flash"]')`)
	if got := b.eval(`document.querySelector('#permits-live [data-testid="flash"]').textContent`); !strings.Contains(got, "Hearth will ask you again") {
		t.Errorf("Ask again answers %q", got)
	}
	again := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"no"}})
	newID, _ := again.Env["permit_id"].(string)
	if again.State() != "pending" || newID == "" {
		t.Fatalf("after Ask again the same call must ask: %s", again.Raw)
	}
	b.waitFor("the new card, live", `!!document.querySelector('[data-testid="permit"][data-permit-id="`+newID+`"] [data-testid="approve-once"]')`)
	b.shot("asked-again")
	b.checkConsole()
}

// TestBrowserPageKeepsItsWidthWhenItStartsToScroll: the pages update
// themselves, and the update that first makes a page longer than the
// window must not narrow it (the scrollbar's room is kept from the start).
// Without that, every paragraph re-wraps and the buttons move under the
// pointer: a press on "Ask again" landed beside it once a denied request's
// text wrapped onto one more line.
func TestBrowserPageKeepsItsWidthWhenItStartsToScroll(t *testing.T) {
	in := hearthtest.Start(t, nil)
	b := openTab(t, in, "gutter", "/permits", chromedp.WaitVisible(chromedp.CSS(`[data-testid="permits-empty"]`)))
	width := `(function () { var m = document.getElementById("content"); return m.getBoundingClientRect().width + "/" + (document.documentElement.scrollHeight > innerHeight); })()`
	short := b.eval(width)
	if !strings.HasSuffix(short, "/false") {
		t.Fatalf("the empty Permits page already scrolls at 800x900 (width/scrolls): %s", short)
	}
	// A live update makes the page long; a screenshot makes the headless
	// browser draw a frame, which is when it adds a scrollbar.
	b.eval(`var tall = document.createElement("div"); tall.style.height = "3000px"; document.getElementById("page-body").appendChild(tall); "grown"`)
	if _, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot()); err != nil {
		t.Fatal(err)
	}
	long := b.eval(width)
	t.Logf("width/scrolls: %s before, %s after", short, long)
	if !strings.HasSuffix(long, "/true") {
		t.Fatalf("the grown page does not scroll (width/scrolls): %s", long)
	}
	if strings.Split(short, "/")[0] != strings.Split(long, "/")[0] {
		t.Errorf("the page's width changed when it started to scroll: %s before, %s after", short, long)
	}
}
