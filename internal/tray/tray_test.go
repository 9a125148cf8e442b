package tray

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/assets"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// recorder is a UI that keeps every View it was shown.
type recorder struct {
	mu    sync.Mutex
	views []View
}

func (r *recorder) Show(v View) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.views = append(r.views, v)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.views)
}

// waitView waits until the last View shown satisfies ok.
func (r *recorder) waitView(t *testing.T, what string, ok func(View) bool) View {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		var last View
		n := len(r.views)
		if n > 0 {
			last = r.views[n-1]
		}
		r.mu.Unlock()
		if n > 0 && ok(last) {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("never shown: %s; last view %+v", what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fakeAutostart is a logon task in memory.
type fakeAutostart struct {
	mu      sync.Mutex
	on      bool
	exe     string
	failing error
}

func (f *fakeAutostart) funcs() Autostart {
	return Autostart{
		Enabled: func() (bool, error) { f.mu.Lock(); defer f.mu.Unlock(); return f.on, nil },
		Enable: func(exe string) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.failing != nil {
				return f.failing
			}
			f.on, f.exe = true, exe
			return nil
		},
		Disable: func() error { f.mu.Lock(); defer f.mu.Unlock(); f.on = false; return nil },
	}
}

// TestTrayDrivesRealHearth runs the tray against a real in-process Hearth
// (ask mode): the icon follows a pending permit and the e-stop, the menu
// opens a working one-time login URL, latches the e-stop as the operator
// "tray", switches the logon task and quits.
func TestTrayDrivesRealHearth(t *testing.T) {
	in := hearthtest.Start(t, nil)
	ui := &recorder{}
	auto := &fakeAutostart{}
	var mu sync.Mutex
	var browsed []string
	quits := 0
	tr := &Tray{
		Hearth: hearthOf(in.App), Autostart: auto.funcs(), Exe: `C:\Hearth\hearth-tray.exe`,
		Browse: func(u string) error { mu.Lock(); defer mu.Unlock(); browsed = append(browsed, u); return nil },
		Quit:   func() { mu.Lock(); defer mu.Unlock(); quits++ },
		UI:     ui, Every: 50 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tr.Run(ctx)

	// No tunnel is set up in a test home (Serve says so just after Ready):
	// ChatGPT cannot reach Hearth.
	v := ui.waitView(t, "tunnel not set up", func(v View) bool { return v.Entries[ItemTunnel].Title == "Set up the tunnel…" })
	if e := v.Entries[ItemTunnel]; e.Action != ActOpenPanel || v.Icon != assets.TrayDownIcon {
		t.Fatalf("tunnel entry without a tunnel: %+v, icon %s", e, v.Icon)
	}
	if e := v.Entries[ItemAutostart]; !e.Checkbox || e.Checked || e.Disabled {
		t.Fatalf("autostart entry: %+v", e)
	}
	// Nothing changes: nothing is redrawn.
	n := ui.count()
	time.Sleep(300 * time.Millisecond)
	if ui.count() != n {
		t.Fatalf("the UI was redrawn %d times without a change", ui.count()-n)
	}

	c := hearthtest.Connect(t, in.URL, "tray")
	if r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"hi"}}); r.State() != "pending" {
		t.Fatalf("ask mode must park exec for a permit: %s", r.Raw)
	}
	v = ui.waitView(t, "a permit waiting", func(v View) bool { return v.Icon == assets.TrayPermitIcon })
	if got := v.Entries[ItemPermits].Title; got != "Pending permits (1)" {
		t.Fatalf("permits entry = %q", got)
	}
	// The mode the operator sets is the one the tray shows.
	if !strings.Contains(v.Tooltip, "Mode: Ask me") {
		t.Fatalf("tooltip without the mode: %q", v.Tooltip)
	}
	if err := in.App.Operator.SetPolicy(ctx, "ada", "trusted"); err != nil {
		t.Fatal(err)
	}
	ui.waitView(t, "the trusted mode", func(v View) bool { return strings.Contains(v.Tooltip, "Mode: Trusted") })
	if err := in.App.Operator.SetPolicy(ctx, "ada", "ask"); err != nil {
		t.Fatal(err)
	}

	// Open control panel: a fresh login URL that signs the browser in once.
	tr.Click(ctx, ItemOpenPanel)
	mu.Lock()
	if len(browsed) != 1 || !strings.Contains(browsed[0], "/login?token=") {
		mu.Unlock()
		t.Fatalf("browsed %v", browsed)
	}
	login := browsed[0]
	mu.Unlock()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(login)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 {
		t.Fatalf("login URL from the tray: %s, cookies %v", resp.Status, resp.Cookies())
	}

	// Pending permits: a login that lands on the Permits page.
	tr.Click(ctx, ItemPermits)
	mu.Lock()
	if len(browsed) != 2 || !strings.Contains(browsed[1], "/login?token=") {
		mu.Unlock()
		t.Fatalf("browsed %v", browsed)
	}
	permitsLogin := browsed[1]
	mu.Unlock()
	resp, err = noRedirect.Get(permitsLogin)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/permits" {
		t.Fatalf("the Pending permits login lands on %q (%s), want /permits", loc, resp.Status)
	}

	// Emergency stop from the menu: latched by the operator "tray".
	tr.Click(ctx, ItemEStop)
	st, err := in.App.Gov.Status(ctx)
	if err != nil || !st.EStop.Latched || st.EStop.By != "operator:"+Operator {
		t.Fatalf("e-stop after the menu click: %+v %v", st.EStop, err)
	}
	v = ui.waitView(t, "e-stop", func(v View) bool { return v.Icon == assets.TrayStoppedIcon })
	if e := v.Entries[ItemEStop]; e.Action != ActOpenPanel {
		t.Fatalf("a latched e-stop entry must lead to the panel: %+v", e)
	}
	if r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo"}); r.Get("error.code") != "estop" {
		t.Fatalf("a call after the tray's e-stop: %s", r.Raw)
	}

	// Start at logon: on, then off.
	tr.Click(ctx, ItemAutostart)
	v = ui.waitView(t, "autostart on", func(v View) bool { return v.Entries[ItemAutostart].Checked })
	if auto.exe != tr.Exe || v.Entries[ItemAutostart].Action != ActDisableAutostart {
		t.Fatalf("enable: exe %q, entry %+v", auto.exe, v.Entries[ItemAutostart])
	}
	tr.Click(ctx, ItemAutostart)
	ui.waitView(t, "autostart off", func(v View) bool { return !v.Entries[ItemAutostart].Checked })
	// A failing action says so in the tooltip until the next one succeeds.
	auto.failing = errors.New("access denied")
	tr.Click(ctx, ItemAutostart)
	ui.waitView(t, "the failure", func(v View) bool { return strings.Contains(v.Tooltip, "Last action failed: access denied") })
	tr.Click(ctx, ItemOpenPanel)
	ui.waitView(t, "the failure cleared", func(v View) bool { return !strings.Contains(v.Tooltip, "failed") })

	tr.Click(ctx, ItemQuit)
	mu.Lock()
	defer mu.Unlock()
	if quits != 1 {
		t.Fatalf("quit called %d times", quits)
	}
}

// TestTrayTunnelEntry drives the tunnel entry against a fake supervisor.
func TestTrayTunnelEntry(t *testing.T) {
	var mu sync.Mutex
	state := tunnel.StateStopped
	starts, stops := 0, 0
	tr := &Tray{
		Hearth: Hearth{
			Status:  func(context.Context) (govern.Status, error) { return govern.Status{}, nil },
			Permits: func(context.Context) ([]govern.Permit, error) { return make([]govern.Permit, 0), nil },
			Tunnel:  func() tunnel.Status { mu.Lock(); defer mu.Unlock(); return tunnel.Status{State: state} },
			StartTunnel: func() error {
				mu.Lock()
				defer mu.Unlock()
				starts++
				state = tunnel.StateReady
				return nil
			},
			StopTunnel: func() { mu.Lock(); defer mu.Unlock(); stops++; state = tunnel.StateStopped },
		},
		UI: &recorder{},
	}
	ctx := context.Background()
	tr.Refresh(ctx)
	if v := tr.View(); v.Entries[ItemTunnel].Action != ActStartTunnel || v.Icon != assets.TrayDownIcon {
		t.Fatalf("stopped: %+v", v.Entries[ItemTunnel])
	}
	tr.Click(ctx, ItemTunnel)
	if v := tr.View(); starts != 1 || v.Entries[ItemTunnel].Action != ActStopTunnel || v.Icon != assets.TrayReadyIcon {
		t.Fatalf("after start: starts %d, %+v %s", starts, v.Entries[ItemTunnel], v.Icon)
	}
	tr.Click(ctx, ItemTunnel)
	if stops != 1 || tr.View().Entries[ItemTunnel].Action != ActStartTunnel {
		t.Fatalf("after stop: stops %d", stops)
	}
	// No autostart functions (not Windows): the entry is disabled, and a
	// click does nothing harmful.
	if e := tr.View().Entries[ItemAutostart]; !e.Disabled {
		t.Fatalf("autostart entry without autostart: %+v", e)
	}
	// A poke makes Run re-read at once rather than at the next tick.
	tr.Every = time.Hour
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go tr.Run(rctx)
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	state = tunnel.StateCrashLoop
	mu.Unlock()
	tr.Poke()
	deadline := time.Now().Add(5 * time.Second)
	for tr.View().Entries[ItemTunnel].Title != "Start tunnel (crashed repeatedly)" {
		if time.Now().After(deadline) {
			t.Fatalf("poke did not refresh: %+v", tr.View().Entries[ItemTunnel])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTrayOpenChatGPT clicks "Open ChatGPT" on a real Hearth whose
// wake.browser_path names no browser: the click reaches Hearth's wake
// service, which reports the missing browser, and the tooltip says the
// action failed.
func TestTrayOpenChatGPT(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-msedge.exe")
	in := hearthtest.Start(t, func(c *config.Config) { c.Wake.BrowserPath = missing })
	ui := &recorder{}
	tr := &Tray{Hearth: hearthOf(in.App), UI: ui, Every: time.Hour}
	ctx := context.Background()
	tr.Refresh(ctx)
	if e := tr.View().Entries[ItemOpenChatGPT]; e.Title != "Open ChatGPT" || e.Action != ActOpenChatGPT {
		t.Fatalf("entry %+v", e)
	}
	tr.Click(ctx, ItemOpenChatGPT)
	if w := in.App.Wake.Window(); w.Open || !strings.Contains(w.Error, missing) {
		t.Fatalf("window %+v", w)
	}
	if tip := tr.View().Tooltip; !strings.Contains(tip, "Last action failed") {
		t.Fatalf("tooltip %q", tip)
	}
}
