package web_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/tunnel"
	"github.com/hearth-dev/hearth/web"
)

// connectedHearth is a real Hearth whose setup a person finished: the
// FAKE tunnel-client beside "hearth-tray" (dir) trusted, a key and the
// tunnel ID saved, "connect whenever Hearth starts" on (as Connect
// leaves it) and the tunnel ready.
func connectedHearth(t *testing.T) (in *hearthtest.Instance, client string) {
	t.Helper()
	return connectedHearthIn(t, besideHearth(t))
}

// connectedHearthIn is connectedHearth with the program folder dir.
func connectedHearthIn(t *testing.T, dir string) (in *hearthtest.Instance, client string) {
	t.Helper()
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

// appendTo changes the file at path, as a new version of it would.
func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// takeProgramAway moves the trusted connection program of in (client)
// away, as if it had been deleted, and has Hearth find it gone as its next
// start does (the tunnel is client_changed). back puts it back unchanged.
func takeProgramAway(t *testing.T, in *hearthtest.Instance, client string) (back func()) {
	t.Helper()
	in.App.StopTunnel()
	away := client + ".away"
	if err := os.Rename(client, away); err != nil {
		t.Fatal(err)
	}
	if err := in.App.StartTunnel(); err == nil {
		t.Fatal("a gone file was started")
	}
	awaitTunnel(t, in.App.Tunnel, tunnel.StateClientChanged)
	return func() {
		t.Helper()
		if err := os.Rename(away, client); err != nil {
			t.Fatal(err)
		}
	}
}

// oldVersionHearth is a connected Hearth, stopped, whose program folder
// (oldDir, its tunnel-client oldClient) holds an older hearth-tray: what
// a new version unpacked elsewhere starts from.
func oldVersionHearth(t *testing.T) (in *hearthtest.Instance, oldDir, oldClient string) {
	t.Helper()
	oldDir = besideHearth(t)
	if err := os.WriteFile(filepath.Join(oldDir, "hearth-tray"), []byte("an older hearth-tray"), 0o700); err != nil {
		t.Fatal(err)
	}
	in, oldClient = connectedHearthIn(t, oldDir)
	in.Stop()
	return in, oldDir, oldClient
}

// startAgainIn starts Hearth on home again, as a version whose program
// folder is dir.
func startAgainIn(t *testing.T, home, dir string) *hearthtest.Instance {
	t.Helper()
	return hearthtest.StartHomeWith(t, home, nil, func(o *app.Options) { o.TunnelProgramDir = dir })
}

// setupPage is in's Setup page as a browser (b) logged in to a panel (fx)
// over in reads it.
func setupPage(t *testing.T, in *hearthtest.Instance) (fx *fixture, b *browser, page string) {
	t.Helper()
	fx = fixtureOf(t, in)
	b = fx.login(t)
	return fx, b, fx.get(t, b, "/setup")
}

// waitConnected waits until Setup says Hearth is connected to OpenAI.
func waitConnected(b *tab, what string) {
	b.t.Helper()
	b.waitFor(what, `(function () {
	  var e = document.querySelector('[data-testid="connect-state"]');
	  return !!e && /Connected to OpenAI/.test(e.innerText);
	})()`)
}

// openDetails opens Setup's Details and waits until the element of
// testid shows.
func openDetails(b *tab, what, testid string) {
	b.t.Helper()
	b.run(what, chromedp.WaitVisible(chromedp.CSS(`[data-testid="setup-details"] summary`)),
		chromedp.Click(chromedp.CSS(`[data-testid="setup-details"] summary`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="`+testid+`"]`)))
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
	appendTo(t, client, "a newer version")
	// What Hearth's next start does with "connect whenever Hearth starts".
	if err := in.App.StartTunnel(); err == nil {
		t.Fatal("the changed file was started")
	}
	awaitTunnel(t, in.App.Tunnel, tunnel.StateClientChanged)

	b := openTab(t, in, "trust-again", "/", chromedp.WaitVisible(chromedp.CSS(`[data-testid="status-sentence"]`)))
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
	if s, err := textOf(b.ctx, `[data-testid="trust-button"]`); err != nil || !strings.Contains(s, "Trust this file and connect") {
		t.Fatalf("the trust button, which also connects, says %q (%v)", s, err)
	}
	b.run("trust the new file", chromedp.Click(chromedp.CSS(`[data-testid="trust-button"]`)))
	waitConnected(b, "connected by itself")
	b.shot("connected-again")
	if st := in.App.Tunnel.Status(); st.State != tunnel.StateReady {
		t.Fatalf("the tunnel after the trust: %+v", st)
	}
	if s := b.text(); strings.Contains(s, "Connect needs") || strings.Contains(s, "Finish setting up") {
		t.Fatalf("Setup after the trust: %s", s)
	}
	b.checkConsole()
}

// TestBrowserProgramBackUnchanged: the trusted connection program
// disappears (Hearth, at its next start, finds it gone) and comes back
// unchanged while Setup is open. "Check again" is a button that says
// what Hearth sees; the open page sees the file come back by itself,
// with no reload by the person, and says so (looking changes nothing);
// "Check again" then takes it, and the page offers the one next step:
// Connect, which connects.
func TestBrowserProgramBackUnchanged(t *testing.T) {
	in, client := connectedHearth(t)
	back := takeProgramAway(t, in, client)

	b := openTab(t, in, "program-back", "/setup", chromedp.WaitVisible(chromedp.CSS(`#step-program[data-step-state="current"] [data-testid="client-missing"]`)))
	b.shot("program-gone")
	if s := b.text(); !strings.Contains(s, "The connection program Hearth trusted is gone") {
		t.Fatalf("Setup with the program gone: %s", s)
	}
	b.run("check again", chromedp.Click(chromedp.CSS(`[data-testid="check-again"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#step-program [data-testid="flash-error"]`)))
	if s, err := textOf(b.ctx, `#step-program [data-testid="flash-error"]`); err != nil || !strings.Contains(s, "Hearth does not see "+tunnel.ClientName()+" in ") {
		t.Fatalf("Check again with the file still gone says %q (%v)", s, err)
	}

	back()
	// The page sees the file back by itself; only the person's "Check
	// again" (a POST) lifts what stopped the tunnel.
	b.run("the page sees the file back", chromedp.WaitVisible(chromedp.CSS(`#step-program [data-testid="client-back-seen"]`)))
	if st := in.App.Tunnel.Status(); st.State != tunnel.StateClientChanged {
		t.Fatalf("looking at Setup changed the tunnel's state: %+v", st)
	}
	b.run("check again", chromedp.Click(chromedp.CSS(`[data-testid="check-again"]`)))
	b.waitFor("the page offers Connect",
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
	waitConnected(b, "connected")
	b.checkConsole()
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

// TestBrowserStopSaysHowLong: with "connect whenever Hearth starts" on,
// Stop says that it lasts only until Hearth next starts and offers the
// choice. "Stop for now" keeps tunnel.autostart on and says Hearth
// connects again at its next start; "Stop and don't connect at start"
// turns it off, changing that one key of config.json and nothing else of
// the person's file, and says the stop lasts.
func TestBrowserStopSaysHowLong(t *testing.T) {
	in, _ := connectedHearth(t)
	cfgPath := filepath.Join(in.Home, "config.json")
	b := openTab(t, in, "stop", "/setup")
	openDetails(b, "open Setup's details", "stop-off-button")
	b.shot("stop-choice")
	if s, err := textOf(b.ctx, `[data-testid="stop-button"]`); err != nil || s != "Stop for now" {
		t.Fatalf("the stop button says %q (%v)", s, err)
	}
	if s, err := textOf(b.ctx, `[data-testid="stop-note"]`); err != nil || !strings.Contains(s, "connects again") {
		t.Fatalf("the stop's note says %q (%v)", s, err)
	}
	b.run("stop for now", chromedp.Click(chromedp.CSS(`[data-testid="stop-button"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	if s, _ := textOf(b.ctx, `[data-testid="flash"]`); !strings.Contains(s, "Hearth connects again when it next starts") {
		t.Fatalf("Stop for now says %q", s)
	}
	if in.App.Tunnel.Running() || !in.App.Tunnel.Config().Autostart {
		t.Fatalf("after Stop for now: running %v, autostart %v", in.App.Tunnel.Running(), in.App.Tunnel.Config().Autostart)
	}

	if err := in.App.StartTunnel(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	b.run("reload", chromedp.Navigate(strings.TrimSuffix(in.App.PanelURL(), "/")+"/setup"))
	openDetails(b, "open Setup's details after the reload", "stop-off-button")
	b.run("stop and don't connect at start", chromedp.Click(chromedp.CSS(`[data-testid="stop-off-button"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	b.shot("stopped-for-good")
	if s, _ := textOf(b.ctx, `[data-testid="flash"]`); !strings.Contains(s, "Hearth will not connect by itself when it starts") {
		t.Fatalf("Stop and don't connect at start says %q", s)
	}
	if in.App.Tunnel.Running() || in.App.Tunnel.Config().Autostart {
		t.Fatalf("after Stop and don't connect at start: running %v, autostart %v", in.App.Tunnel.Running(), in.App.Tunnel.Config().Autostart)
	}
	after, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(string(before), `"autostart": true`, `"autostart": false`, 1); string(after) != want || want == string(before) {
		t.Fatalf("config.json changed more than tunnel.autostart:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	openDetails(b, "open details again", "stop-note")
	if s, _ := textOf(b.ctx, `[data-testid="stop-note"]`); !strings.Contains(s, "does not connect by itself") {
		t.Fatalf("the stop's note once autostart is off: %q", s)
	}
	b.checkConsole()
}

// TestSetupLiveDoesNotAskTaskScheduler: the Setup page's live refreshes
// (its state every 2 s, its lead every 2 s) never read the logon task's
// state, which on Windows starts schtasks.exe each time (about 40 a
// minute with the page open); only the full page shows it.
func TestSetupLiveDoesNotAskTaskScheduler(t *testing.T) {
	in, _ := connectedHearth(t)
	var mu sync.Mutex
	reads := 0
	f := fixtureOfWith(t, in, func(deps *web.Deps) {
		deps.StartAtLogon = func() (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			reads++
			return true, nil
		}
	})
	b := f.login(t)
	if page := f.get(t, b, "/setup"); !strings.Contains(page, "on (change it from the tray icon") {
		t.Fatalf("the full page does not show the logon task's state:\n%s", page)
	}
	mu.Lock()
	full := reads
	mu.Unlock()
	for range 20 {
		f.get(t, b, "/setup/live")
		f.get(t, b, "/setup/progress/live?phase=chatgpt")
	}
	mu.Lock()
	defer mu.Unlock()
	if reads != full {
		t.Fatalf("40 live refreshes read the logon task %d times", reads-full)
	}
}

// TestNewVersionFolderRunsItsOwnClient: a new version of Hearth unpacked
// into a new folder, with its package's own tunnel-client beside it, no
// longer runs the tunnel-client beside the old copy it was pinned in: at
// start it trusts and runs the one beside it (as on first run), and Setup
// says so, naming both folders. A pin of a file that lies beside no
// hearth-tray (the person's own choice) is kept.
func TestNewVersionFolderRunsItsOwnClient(t *testing.T) {
	in, oldDir, oldClient := oldVersionHearth(t)

	newDir := besideHearth(t)
	newClient := filepath.Join(newDir, filepath.Base(oldClient))
	appendTo(t, newClient, "the version of the new package")
	in2 := startAgainIn(t, in.Home, newDir)
	awaitTunnel(t, in2.App.Tunnel, tunnel.StateReady)
	if pin, _ := in2.App.Tunnel.Pinned(); pin.Path != newClient {
		t.Fatalf("the new version runs %s, want the one beside it, %s", pin.Path, newClient)
	}
	_, _, page := setupPage(t, in2)
	if !strings.Contains(page, `data-testid="program-moved"`) || !strings.Contains(page, newDir) || !strings.Contains(page, oldDir) {
		t.Fatalf("Setup does not say which connection program runs now:\n%s", page)
	}
	in2.Stop()

	// The person pins a file beside no hearth-tray: the next start keeps it.
	mine := filepath.Join(t.TempDir(), filepath.Base(oldClient))
	data, err := os.ReadFile(oldClient)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, data, 0o700); err != nil {
		t.Fatal(err)
	}
	in3 := startAgainIn(t, in.Home, newDir)
	sum := sha256.Sum256(data)
	if _, err := in3.App.Tunnel.PinClient(mine, hex.EncodeToString(sum[:])); err != nil {
		t.Fatal(err)
	}
	in3.Stop()
	in4 := startAgainIn(t, in.Home, newDir)
	if pin, _ := in4.App.Tunnel.Pinned(); pin.Path != mine {
		t.Fatalf("a start replaced the person's own pin %s with %s", mine, pin.Path)
	}
}

// TestSetupLookingLeavesProgramBackToCheckAgain: the trusted connection
// program went away (the tunnel is client_changed) and is back as it
// was. Opening Setup shows that, but changes nothing (a GET never
// changes Hearth's state); "Check again" lifts it.
func TestSetupLookingLeavesProgramBackToCheckAgain(t *testing.T) {
	in, client := connectedHearth(t)
	takeProgramAway(t, in, client)()
	fx, b, page := setupPage(t, in)
	if st := in.App.Tunnel.Status(); st.State != tunnel.StateClientChanged {
		t.Fatalf("a GET of /setup changed the tunnel's state: %+v", st)
	}
	if !strings.Contains(page, `data-testid="client-back-seen"`) {
		t.Fatalf("Setup does not say the program is back:\n%s", page)
	}
	if r := fx.post(t, b, "/setup/program/check"); r.StatusCode != 303 {
		t.Fatalf("Check again: %d\n%s", r.StatusCode, r.body)
	}
	if st := in.App.Tunnel.Status(); st.State != tunnel.StateStopped || st.Reason != tunnel.ReasonClientBack {
		t.Fatalf("the tunnel after Check again: %+v", st)
	}
}

// TestSetupNewVersionInFilesKeepsPin: a new version of Hearth unzipped
// into a folder ChatGPT can write to through Hearth (an fs root) does not
// switch to the tunnel-client beside it by itself: the model could have
// put that file there. The old pin keeps running; Setup offers the new
// file to trust and says why, and trusting it pins it.
func TestSetupNewVersionInFilesKeepsPin(t *testing.T) {
	in, _, oldClient := oldVersionHearth(t)

	// Unzipped in a folder of the fs root (say, Downloads).
	newDir := filepath.Join(in.Root, "Downloads", "hearth-new")
	if err := os.MkdirAll(newDir, 0o700); err != nil {
		t.Fatal(err)
	}
	newClient := filepath.Join(newDir, filepath.Base(oldClient))
	data, err := os.ReadFile(oldClient)
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, "written by whoever could write there"...)
	if err := os.WriteFile(newClient, data, 0o700); err != nil {
		t.Fatal(err)
	}
	in2 := startAgainIn(t, in.Home, newDir)
	awaitTunnel(t, in2.App.Tunnel, tunnel.StateReady)
	if pin, _ := in2.App.Tunnel.Pinned(); pin.Path != oldClient {
		t.Fatalf("the new version in an fs root switched by itself to %s, want the old pin %s", pin.Path, oldClient)
	}
	fx, b, page := setupPage(t, in2)
	if !strings.Contains(page, `data-testid="program-held"`) || !strings.Contains(page, newDir) || !strings.Contains(page, "ChatGPT can write to") {
		t.Fatalf("Setup does not offer the new version's program, saying why:\n%s", page)
	}
	sum := sha256.Sum256(data)
	if r := fx.post(t, b, "/setup/pin", "client_path", newClient, "client_sha256", hex.EncodeToString(sum[:])); r.StatusCode != 303 {
		t.Fatalf("trust the new file: %d\n%s", r.StatusCode, r.body)
	}
	if pin, _ := in2.App.Tunnel.Pinned(); pin.Path != newClient {
		t.Fatalf("after Trust this file the pin is %s, want %s", pin.Path, newClient)
	}
	if page := fx.get(t, b, "/setup"); strings.Contains(page, `data-testid="program-held"`) {
		t.Fatalf("Setup still offers the file once it is trusted:\n%s", page)
	}
}
