//go:build linux

package desktop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/hearth-dev/hearth/internal/desktop"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/proc"
	"github.com/hearth-dev/hearth/internal/screen"
	"github.com/hearth-dev/hearth/internal/screen/screentest"
)

// closableWindow is a window of the test's own that, like an app's,
// takes WM_DELETE_WINDOW and destroys itself when asked to close.
func closableWindow(t *testing.T, display, title string) xproto.Window {
	t.Helper()
	c, err := xgb.NewConnDisplay(display)
	must(t, err)
	t.Cleanup(c.Close)
	scr := xproto.Setup(c).DefaultScreen(c)
	id, err := xproto.NewWindowId(c)
	must(t, err)
	must(t, xproto.CreateWindowChecked(c, scr.RootDepth, id, scr.Root, 300, 200, 120, 90, 0, xproto.WindowClassInputOutput,
		scr.RootVisual, xproto.CwOverrideRedirect, []uint32{1}).Check())
	atom := func(n string) xproto.Atom {
		r, err := xproto.InternAtom(c, false, uint16(len(n)), n).Reply()
		must(t, err)
		return r.Atom
	}
	protocols, del := atom("WM_PROTOCOLS"), atom("WM_DELETE_WINDOW")
	b := make([]byte, 4)
	xgb.Put32(b, uint32(del))
	xproto.ChangeProperty(c, xproto.PropModeReplace, id, protocols, xproto.AtomAtom, 32, 1, b)
	xproto.ChangeProperty(c, xproto.PropModeReplace, id, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(title)), []byte(title))
	must(t, xproto.MapWindowChecked(c, id).Check())
	go func() {
		for {
			ev, err := c.WaitForEvent()
			if ev == nil && err == nil {
				return
			}
			if m, ok := ev.(xproto.ClientMessageEvent); ok && m.Type == protocols && xproto.Atom(m.Data.Data32[0]) == del {
				xproto.DestroyWindow(c, id)
				xproto.GetInputFocus(c).Reply()
			}
		}
	}()
	return id
}

func windowService(t *testing.T) *desktop.Service {
	roots, err := fsops.NewRoots([]string{t.TempDir()}, nil)
	must(t, err)
	s, err := desktop.New(roots, func(title string) bool { return strings.Contains(title, "Hearth control panel") }, proc.NewStarted(), slog.New(slog.DiscardHandler))
	must(t, err)
	return s
}

func listed(t *testing.T, s *desktop.Service, title string) *desktop.WindowInfo {
	t.Helper()
	l, err := s.Windows(context.Background(), desktop.WindowsInput{})
	must(t, err)
	for i := range l.Windows {
		if l.Windows[i].Title == title {
			return &l.Windows[i]
		}
	}
	return nil
}

func ip(v int) *int { return &v }

// TestWindowsListAndChangeUnderX11: on a real X server (Xvfb) ui.windows
// lists an app's window with its process, app, bounds and monitor, and
// not Hearth's own windows (its process's, one showing the panel);
// ui.window moves and resizes it, closes a window that takes a close
// request (it is gone after), refuses Hearth's own windows and says what
// X11 cannot do here.
func TestWindowsListAndChangeUnderX11(t *testing.T) {
	display := screentest.StartXvfb(t)
	sleeper := exec.Command("sleep", "60")
	must(t, sleeper.Start())
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	screentest.OpenWindow(t, display, 20, 30, 200, 100, 0x3366cc, "Budget – Zoë", sleeper.Process.Pid)
	own := screentest.OpenWindow(t, display, 50, 50, 80, 60, 0xcc0000, "hearth itself", os.Getpid())
	screentest.OpenWindow(t, display, 60, 60, 80, 60, 0x00cc00, "Hearth control panel – Firefox", sleeper.Process.Pid)
	s := windowService(t)
	ctx := context.Background()

	w := listed(t, s, "Budget – Zoë")
	if w == nil {
		t.Fatal("ui.windows does not list the app's window")
	}
	if w.ProcessID != sleeper.Process.Pid || w.App != "sleep" || w.Monitor != 1 || w.Bounds.X != 20 || w.Bounds.Y != 30 || w.Bounds.W != 200 || w.Bounds.H != 100 {
		t.Errorf("listed %+v", *w)
	}
	for _, title := range []string{"hearth itself", "Hearth control panel – Firefox"} {
		if listed(t, s, title) != nil {
			t.Errorf("ui.windows lists Hearth's own window %q", title)
		}
	}

	if _, err := s.Window(ctx, desktop.WindowInput{HWND: w.HWND, Action: "move", X: ip(100), Y: ip(150)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Window(ctx, desktop.WindowInput{HWND: w.HWND, Action: "resize", W: ip(320), H: ip(200)}); err != nil {
		t.Fatal(err)
	}
	if got := listed(t, s, "Budget – Zoë"); got == nil || got.Bounds.X != 100 || got.Bounds.Y != 150 || got.Bounds.W != 320 || got.Bounds.H != 200 {
		t.Fatalf("after move and resize: %+v", got)
	}
	if _, err := s.Window(ctx, desktop.WindowInput{HWND: w.HWND, Action: "focus"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Window(ctx, desktop.WindowInput{HWND: w.HWND, Action: "maximize"}); err == nil || !strings.Contains(err.Error(), "window manager") {
		t.Errorf("maximize on bare X11 answered %v, want what cannot be done here", err)
	}
	if _, err := s.Window(ctx, desktop.WindowInput{HWND: w.HWND, Action: "close"}); err == nil || !strings.Contains(err.Error(), "takes no close request") {
		t.Errorf("close of a window that takes no close request answered %v", err)
	}
	if _, err := s.Window(ctx, desktop.WindowInput{HWND: uint64(own.ID), Action: "move", X: ip(0), Y: ip(0)}); err == nil || !strings.Contains(err.Error(), "Hearth's own") {
		t.Errorf("moving Hearth's own window answered %v", err)
	}

	closableWindow(t, display, "Closable notes")
	cw := listed(t, s, "Closable notes")
	if cw == nil {
		t.Fatal("the closable window is not listed")
	}
	done, err := s.Window(ctx, desktop.WindowInput{HWND: cw.HWND, Action: "close"})
	if err != nil || !done.Closed {
		t.Fatalf("close: %+v, %v", done, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for listed(t, s, "Closable notes") != nil {
		if time.Now().After(deadline) {
			t.Fatal("the closed window is still listed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWindowRefusesBadInputNamingTheField: ui.window's precheck names the
// field of what is missing or wrong.
func TestWindowRefusesBadInputNamingTheField(t *testing.T) {
	s := windowService(t)
	var pre func(json.RawMessage) error
	for _, sp := range s.Specs() {
		if sp.Operation == "window" {
			pre = sp.Precheck
		}
	}
	for input, field := range map[string]string{
		`{"window_action":"focus"}`:                 "hwnd",
		`{"hwnd":5,"window_action":"fly"}`:          "window_action",
		`{"hwnd":5,"window_action":"move","x":1}`:   "x",
		`{"hwnd":5,"window_action":"resize","w":0}`: "w",
	} {
		err := pre(json.RawMessage(input))
		if err == nil || !strings.Contains(err.Error(), `field "`+field+`"`) {
			t.Errorf("%s: %v, want a refusal naming %s", input, err, field)
		}
	}
}

// TestWindowsOnTwoMonitorsUnderX11: with two monitors side by side
// (RandR), ui.windows lists both monitors and numbers a window's by
// where most of it lies; moving it across changes its monitor.
func TestWindowsOnTwoMonitorsUnderX11(t *testing.T) {
	display := screentest.StartXvfbTwoMonitors(t)
	screentest.OpenWindow(t, display, screentest.Width+40, 40, 200, 100, 0x3366cc, "Report", 0)
	s := windowService(t)
	l, err := s.Windows(context.Background(), desktop.WindowsInput{})
	must(t, err)
	if len(l.Monitors) != 2 || l.Monitors[1].X != screentest.Width || l.Monitors[1].Y != 0 {
		t.Fatalf("monitors %+v, want two side by side", l.Monitors)
	}
	w := listed(t, s, "Report")
	if w == nil || w.Monitor != 2 {
		t.Fatalf("the window on the second monitor is listed as %+v", w)
	}
	done, err := s.Window(context.Background(), desktop.WindowInput{HWND: w.HWND, Action: "move", X: ip(30), Y: ip(40)})
	must(t, err)
	if done.Window == nil || done.Window.Monitor != 1 || done.Window.Bounds.X != 30 {
		t.Fatalf("after the move to the first monitor: %+v", done.Window)
	}
}

// TestWindowOnTheLeftMonitorUnderX11: with the primary monitor on the
// right and another on its left, ui.windows lists the primary first, each
// at its origin with its scale (the desktop's Xft.dpi over 96); a window moved to the screen point read
// off a screenshot of the left monitor (bounds.x + x, bounds.y + y) is
// listed on that monitor at that point, and the next screenshot shows it
// at that pixel: a screenshot's coordinates and a window action's agree.
func TestWindowOnTheLeftMonitorUnderX11(t *testing.T) {
	w, h := screentest.Width, screentest.Height
	display := screentest.StartXvfbMonitors(t, 2*w, h,
		screentest.Monitor{X: w, Y: 0, W: w, H: h}, screentest.Monitor{X: 0, Y: 0, W: w, H: h})
	const green = 0x22bb44
	screentest.OpenWindow(t, display, w+40, 40, 120, 80, green, "Report", 0)
	screentest.SetXftDPI(t, display, 120)
	s := windowService(t)
	l, err := s.Windows(context.Background(), desktop.WindowsInput{})
	must(t, err)
	js, err := json.Marshal(l.Monitors)
	must(t, err)
	if want := `[{"x":640,"y":0,"w":640,"h":480,"scale":1.25},{"x":0,"y":0,"w":640,"h":480,"scale":1.25}]`; string(js) != want {
		t.Fatalf("monitors at Xft.dpi 120 are listed as %s, want %s", js, want)
	}
	win := listed(t, s, "Report")
	if win == nil || win.Monitor != 1 {
		t.Fatalf("the window on the primary monitor is listed as %+v", win)
	}
	shots := &screen.Service{}
	defer shots.Close()
	before, err := shots.Screenshot(context.Background(), screen.ShotInput{Monitor: 2})
	must(t, err)
	if before.Bounds != (screen.Rect{W: w, H: h}) {
		t.Fatalf("left monitor's shot bounds %+v", before.Bounds)
	}
	const px, py = 200, 150 // a pixel of that screenshot
	done, err := s.Window(context.Background(), desktop.WindowInput{HWND: win.HWND, Action: "move",
		X: ip(before.Bounds.X + px), Y: ip(before.Bounds.Y + py)})
	must(t, err)
	if done.Window == nil || done.Window.Monitor != 2 || done.Window.Bounds.X != px || done.Window.Bounds.Y != py {
		t.Fatalf("after the move to the left monitor's (%d, %d): %+v", px, py, done.Window)
	}
	after, err := shots.Screenshot(context.Background(), screen.ShotInput{Monitor: 2})
	must(t, err)
	_, data := after.Image()
	img, err := png.Decode(bytes.NewReader(data))
	must(t, err)
	r, g, b, _ := img.At(px+5, py+5).RGBA()
	if r>>8 != 0x22 || g>>8 != 0xbb || b>>8 != 0x44 {
		t.Fatalf("the left monitor's pixel (%d, %d) is %v, want the moved window's green", px+5, py+5, img.At(px+5, py+5))
	}
	if r, _, _, _ := img.At(px-5, py-5).RGBA(); r>>8 == 0x22 {
		t.Fatalf("the window shows above and left of where it was moved")
	}
}
