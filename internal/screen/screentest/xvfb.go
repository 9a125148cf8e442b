//go:build !windows

// Package screentest starts a real X server (Xvfb) for tests and opens
// real windows on it, for the screen package and the MCP tests of
// ui.screenshot and the clipboard.
package screentest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/randr"
	"github.com/jezek/xgb/xproto"
)

// Width and Height are the screen Xvfb serves.
const (
	Width  = 640
	Height = 480
)

// StartXvfb starts Xvfb on a free display number, sets $DISPLAY for the
// test (t.Setenv) and returns the display's name. It skips the test only
// when Xvfb is missing outside CI; in CI (CI=true) that fails the test,
// since scripts/install-deps installs it.
func StartXvfb(t testing.TB) string {
	t.Helper()
	return startXvfb(t, "-screen", "0", fmt.Sprintf("%dx%dx24", Width, Height))
}

// StartXvfbTwoMonitors is StartXvfb with a screen of 2·Width×Height
// shown as two RandR monitors of Width×Height side by side: the first
// (the primary) at (0, 0), the second at (Width, 0), as a PC with two
// monitors has them.
func StartXvfbTwoMonitors(t testing.TB) string {
	t.Helper()
	return StartXvfbMonitors(t, 2*Width, Height, Monitor{X: 0, Y: 0, W: Width, H: Height}, Monitor{X: Width, Y: 0, W: Width, H: Height})
}

// Monitor is a RandR monitor's place on the X screen.
type Monitor struct{ X, Y, W, H int }

// StartXvfbMonitors is StartXvfb with a screen of w×h shown as the RandR
// monitors mons, the first the primary. The server's own monitor is
// replaced.
func StartXvfbMonitors(t testing.TB, w, h int, mons ...Monitor) string {
	t.Helper()
	display := startXvfb(t, "-screen", "0", fmt.Sprintf("%dx%dx24", w, h))
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := randr.Init(c); err != nil {
		t.Fatalf("Xvfb has no RandR: %v", err)
	}
	root := xproto.Setup(c).DefaultScreen(c).Root
	old, err := randr.GetMonitors(c, root, false).Reply()
	if err != nil {
		t.Fatalf("list Xvfb's RandR monitors: %v", err)
	}
	// The server's own monitor follows its output; given to the first
	// monitor, that output no longer makes one of its own.
	var outputs []randr.Output
	for _, m := range old.Monitors {
		outputs = append(outputs, m.Outputs...)
		randr.DeleteMonitorChecked(c, root, m.Name).Check()
	}
	for i, mon := range mons {
		name := fmt.Sprintf("HEARTH-TEST-%d", i+1)
		a, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
		if err != nil {
			t.Fatal(err)
		}
		m := randr.MonitorInfo{Name: a.Atom, Primary: i == 0, X: int16(mon.X), Y: int16(mon.Y), Width: uint16(mon.W), Height: uint16(mon.H),
			WidthInMillimeters: uint32(mon.W / 4), HeightInMillimeters: uint32(mon.H / 4)}
		if i == 0 {
			m.Outputs, m.NOutput = outputs, uint16(len(outputs))
		}
		if err := randr.SetMonitorChecked(c, root, m).Check(); err != nil {
			t.Fatalf("make RandR monitor %s at %+v: %v", name, mon, err)
		}
	}
	return display
}

func startXvfb(t testing.TB, screens ...string) string {
	t.Helper()
	bin, err := exec.LookPath("Xvfb")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Xvfb is missing in CI (scripts/install-deps installs it): %v", err)
		}
		t.Skipf("Xvfb is not installed (apt-get install xvfb): %v", err)
	}
	// -displayfd has Xvfb pick a free display and print its number.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append(append([]string{"-displayfd", "3"}, screens...), "-nolisten", "tcp", "-noreset")...)
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	w.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	num := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		num <- strings.TrimSpace(line)
		r.Close()
	}()
	var n string
	select {
	case n = <-num:
	case <-time.After(20 * time.Second):
		t.Fatal("Xvfb did not report its display number within 20s")
	}
	if _, err := strconv.Atoi(n); err != nil {
		t.Fatalf("Xvfb reported display %q", n)
	}
	display := ":" + n
	t.Setenv("DISPLAY", display)
	// The unix socket exists once the number is printed; a connection
	// proves it.
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatalf("connect to Xvfb %s: %v (socket %s)", display, err, filepath.Join("/tmp/.X11-unix", "X"+n))
	}
	c.Close()
	return display
}

// Window is a window a test opened; it lives as long as its connection.
type Window struct {
	ID xproto.Window
	c  *xgb.Conn
}

// Close destroys the window.
func (w *Window) Close() { w.c.Close() }

// OpenWindow maps a top-level window at x, y of w×h pixels filled with
// rgb (0xRRGGBB), titled title (WM_NAME and _NET_WM_NAME), declaring
// process pid in _NET_WM_PID (none when 0), and waits until the server has
// drawn it.
func OpenWindow(t testing.TB, display string, x, y, w, h int, rgb uint32, title string, pid int) *Window {
	t.Helper()
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatalf("connect to %s: %v", display, err)
	}
	t.Cleanup(c.Close)
	screen := xproto.Setup(c).DefaultScreen(c)
	id, err := xproto.NewWindowId(c)
	if err != nil {
		t.Fatal(err)
	}
	err = xproto.CreateWindowChecked(c, screen.RootDepth, id, screen.Root, int16(x), int16(y), uint16(w), uint16(h), 0,
		xproto.WindowClassInputOutput, screen.RootVisual, xproto.CwBackPixel|xproto.CwOverrideRedirect|xproto.CwEventMask,
		[]uint32{rgb, 1, xproto.EventMaskExposure}).Check()
	if err != nil {
		t.Fatalf("create a window: %v", err)
	}
	atom := func(name string) xproto.Atom {
		r, err := xproto.InternAtom(c, false, uint16(len(name)), name).Reply()
		if err != nil {
			t.Fatal(err)
		}
		return r.Atom
	}
	xproto.ChangeProperty(c, xproto.PropModeReplace, id, xproto.AtomWmName, xproto.AtomString, 8, uint32(len(title)), []byte(title))
	xproto.ChangeProperty(c, xproto.PropModeReplace, id, atom("_NET_WM_NAME"), atom("UTF8_STRING"), 8, uint32(len(title)), []byte(title))
	if pid != 0 {
		b := make([]byte, 4)
		xgb.Put32(b, uint32(pid))
		xproto.ChangeProperty(c, xproto.PropModeReplace, id, atom("_NET_WM_PID"), xproto.AtomCardinal, 32, 1, b)
	}
	if err := xproto.MapWindowChecked(c, id).Check(); err != nil {
		t.Fatalf("map the window: %v", err)
	}
	// Mapped and exposed: the background is painted.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		ev, xerr := c.PollForEvent()
		if xerr != nil {
			t.Fatalf("X error: %v", xerr)
		}
		if _, ok := ev.(xproto.ExposeEvent); ok {
			xproto.GetInputFocus(c).Reply() // a round trip: the painting is done
			return &Window{ID: id, c: c}
		}
		if ev == nil {
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Fatal("the window was not exposed within 10s")
	return nil
}

// SetXftDPI sets the Xft.dpi resource of display to dpi in the root
// window's RESOURCE_MANAGER property, as `xrdb -merge` does from a
// desktop's settings (the other resources are kept).
func SetXftDPI(t testing.TB, display string, dpi int) {
	t.Helper()
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		t.Fatalf("connect to %s: %v", display, err)
	}
	defer c.Close()
	root := xproto.Setup(c).DefaultScreen(c).Root
	old, err := xproto.GetProperty(c, false, root, xproto.AtomResourceManager, xproto.AtomString, 0, 1<<14).Reply()
	if err != nil {
		t.Fatalf("read RESOURCE_MANAGER: %v", err)
	}
	var db strings.Builder
	for line := range strings.Lines(string(old.Value)) {
		if name, _, _ := strings.Cut(line, ":"); strings.TrimSpace(name) != "Xft.dpi" {
			db.WriteString(line)
		}
	}
	fmt.Fprintf(&db, "Xft.dpi:\t%d\n", dpi)
	v := db.String()
	if err := xproto.ChangePropertyChecked(c, xproto.PropModeReplace, root, xproto.AtomResourceManager, xproto.AtomString, 8, uint32(len(v)), []byte(v)).Check(); err != nil {
		t.Fatalf("set RESOURCE_MANAGER: %v", err)
	}
}
