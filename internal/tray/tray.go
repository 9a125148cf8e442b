// Package tray is Hearth's notification-area icon and menu (docs/DESIGN.md, "Tunnel, tray and recovery") and
// the loopback control endpoint through which a second start of
// hearth-tray reaches the running one.
//
// The state logic is portable and tested on Linux: Render turns a Snapshot
// (e-stop, pending permits, tunnel state, logon task) into a View (icon,
// tooltip, menu entries), and Tray keeps the View current and carries out
// menu clicks against a running Hearth. Only the glue that draws the View
// with fyne.io/systray and opens the browser is Windows code
// (icon_windows.go, browser_windows.go).
//
// Tray re-reads the state every two seconds (a timer, not a busy loop:
// the governance state and the pending permits are two small reads of the
// database) and at once when the tunnel reports a change or after a menu
// action; the UI is touched only when the View changed.
package tray

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// Operator is the operator name the tray's actions are journaled under.
const Operator = "tray"

// DefaultEvery is how often the tray re-reads Hearth's state when nothing
// pokes it.
const DefaultEvery = 2 * time.Second

// Hearth is the running Hearth the tray shows and drives, given as the
// functions it needs (cmd/hearth-tray fills them from the running app);
// the tray knows nothing else of it.
type Hearth struct {
	Status func(ctx context.Context) (govern.Status, error)
	// Permits lists the permits waiting for the operator.
	Permits     func(ctx context.Context) ([]govern.Permit, error)
	Tunnel      func() tunnel.Status
	StartTunnel func() error
	StopTunnel  func()
	// TunnelAutostart reports tunnel.autostart ("connect whenever Hearth
	// starts"): Stop then lasts only until Hearth next starts, and says so.
	// nil: off.
	TunnelAutostart func() bool
	// EStop latches the emergency stop, journaled as operator's.
	EStop func(ctx context.Context, operator, reason string) error
	// OpenChatGPT opens Hearth's own ChatGPT window (internal/wake).
	OpenChatGPT func(ctx context.Context) error
	// LoginURL mints a one-time control panel login URL that lands on
	// page, a panel path such as "/permits"; "" lands where a plain login
	// does (a page remembered from a refused visit, else Status).
	LoginURL func(page string) (string, error)
	// Lowered lists the lowered safety settings the operator has not
	// marked seen (govern.Governor.Lowered), for notifications.
	Lowered func(ctx context.Context) ([]govern.Lowering, error)
	// Started is when this Hearth started: the notifications announce
	// the lowerings made since, also those made while it started.
	Started time.Time
	// Update, when set, is the version of an update Hearth offers ("" for
	// none); the menu then shows "Update to … — what changed".
	Update func() string
}

// Autostart is the "Start at logon" switch: package autostart's Enabled,
// Enable and Disable on Windows. Nil functions leave the entry disabled.
type Autostart struct {
	Enabled func() (bool, error)
	Enable  func(exePath string) error
	Disable func() error
}

// UI shows a View: the notification-area icon on Windows, a recorder in
// tests. Show is called from one goroutine at a time.
type UI interface {
	Show(View)
}

// Tray keeps the UI's View current and carries out menu clicks. Set the
// fields, then call Run; Click, OpenPanel and Poke may be called from any
// goroutine.
type Tray struct {
	Hearth    Hearth
	Autostart Autostart
	// Exe is the program the logon task starts: this hearth-tray.
	Exe string
	// Browse opens a URL in the user's default browser.
	Browse func(url string) error
	// Quit begins Hearth's shutdown (the menu's Quit); it must not wait
	// for the shutdown to finish.
	Quit func()
	UI   UI
	Log  *slog.Logger
	// Every is how often the state is re-read when nothing pokes the
	// tray; 0 means DefaultEvery.
	Every time.Duration

	pokeOnce sync.Once
	poke     chan struct{}

	// refresh serializes reading the state and showing it, so that the UI
	// never gets an older View after a newer one.
	refresh sync.Mutex

	mu      sync.Mutex
	view    View
	shown   bool
	auto    AutostartState
	lastErr string
	readErr bool
}

func (t *Tray) log() *slog.Logger {
	if t.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return t.Log
}

func (t *Tray) pokes() chan struct{} {
	t.pokeOnce.Do(func() { t.poke = make(chan struct{}, 1) })
	return t.poke
}

// Poke asks Run to re-read the state now (the tunnel's OnChange
// subscription calls it). It never blocks.
func (t *Tray) Poke() {
	select {
	case t.pokes() <- struct{}{}:
	default:
	}
}

// View is what the tray shows now.
func (t *Tray) View() View {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.view
}

// Run shows the state at once and keeps it current until ctx ends.
func (t *Tray) Run(ctx context.Context) {
	every := t.Every
	if every <= 0 {
		every = DefaultEvery
	}
	t.readAutostart()
	t.Refresh(ctx)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-t.pokes():
		}
		t.Refresh(ctx)
	}
}

// Refresh reads the state and shows it if it changed.
func (t *Tray) Refresh(ctx context.Context) {
	t.refresh.Lock()
	defer t.refresh.Unlock()
	v := Render(t.snapshot(ctx))
	t.mu.Lock()
	changed := !t.shown || v != t.view
	t.view, t.shown = v, true
	t.mu.Unlock()
	if changed && t.UI != nil {
		t.UI.Show(v)
	}
}

// snapshot reads Hearth's state. A failed read is logged when it starts
// failing, not every two seconds.
func (t *Tray) snapshot(ctx context.Context) Snapshot {
	var s Snapshot
	st, err := t.Hearth.Status(ctx)
	perms, perr := t.Hearth.Permits(ctx)
	if err = errors.Join(err, perr); err != nil {
		s.StatusErr = true
	}
	s.EStop, s.EStopReason = st.EStop.Latched, st.EStop.Reason
	s.Mode = st.Mode
	s.Pending = len(perms)
	s.Tunnel = t.Hearth.Tunnel()
	if t.Hearth.TunnelAutostart != nil {
		s.TunnelAutostart = t.Hearth.TunnelAutostart()
	}
	if t.Hearth.Update != nil {
		s.Update = t.Hearth.Update()
	}
	t.mu.Lock()
	if err != nil && !t.readErr && ctx.Err() == nil {
		t.log().Error("tray: read hearth state", "err", err)
	}
	t.readErr = err != nil
	s.Autostart, s.LastError = t.auto, t.lastErr
	t.mu.Unlock()
	return s
}

// readAutostart asks the system whether the logon task exists. It starts
// a process (schtasks), so it runs at start and after a change, not on
// every refresh.
func (t *Tray) readAutostart() {
	if t.Autostart.Enabled == nil {
		return
	}
	on, err := t.Autostart.Enabled()
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.log().Warn("tray: query the logon task", "err", err)
		t.auto = AutostartState{}
		return
	}
	t.auto = AutostartState{Known: true, Enabled: on}
}

// Click carries out what the menu entry item does now, then refreshes. A
// failure is logged and shown in the tooltip until the next action
// succeeds.
func (t *Tray) Click(ctx context.Context, item Item) {
	if item < 0 || item >= numItems {
		return
	}
	t.mu.Lock()
	act, page := t.view.Entries[item].Action, t.view.Entries[item].Page
	t.mu.Unlock()
	err := t.do(ctx, act, page)
	t.mu.Lock()
	t.lastErr = ""
	if err != nil {
		t.lastErr = clip("Last action failed: "+err.Error(), 80)
	}
	t.mu.Unlock()
	if err != nil {
		t.log().Error("tray: menu action", "item", item, "err", err)
	}
	if act != ActQuit {
		t.Refresh(ctx)
	}
}

func (t *Tray) do(ctx context.Context, act Action, page string) error {
	switch act {
	case ActOpenPanel:
		return t.OpenPanelAt(page)
	case ActEStop:
		return t.Hearth.EStop(ctx, Operator, "emergency stop from the tray menu")
	case ActOpenChatGPT:
		if t.Hearth.OpenChatGPT == nil {
			return errors.New("open ChatGPT: not available here")
		}
		return t.Hearth.OpenChatGPT(ctx)
	case ActStartTunnel:
		return t.Hearth.StartTunnel()
	case ActStopTunnel:
		t.Hearth.StopTunnel()
		return nil
	case ActEnableAutostart, ActDisableAutostart:
		var err error
		switch {
		case t.Autostart.Enable == nil || t.Autostart.Disable == nil:
			err = errors.New("start at logon is not available here")
		case act == ActEnableAutostart:
			err = t.Autostart.Enable(t.Exe)
		default:
			err = t.Autostart.Disable()
		}
		t.readAutostart()
		return err
	case ActQuit:
		if t.Quit != nil {
			t.Quit()
		}
	}
	return nil
}

// OpenPanel mints a one-time login URL and opens it in the default
// browser: the control panel, signed in.
func (t *Tray) OpenPanel() error { return t.OpenPanelAt("") }

// OpenPanelAt is OpenPanel landing on page, a panel path such as
// "/permits" ("" as OpenPanel).
func (t *Tray) OpenPanelAt(page string) error {
	u, err := t.Hearth.LoginURL(page)
	if err != nil {
		return err
	}
	if t.Browse == nil {
		return errors.New("open the control panel: no browser here")
	}
	if err := t.Browse(u); err != nil {
		return fmt.Errorf("open the control panel in the browser: %w", err)
	}
	return nil
}
