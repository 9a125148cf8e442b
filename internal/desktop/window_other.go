//go:build !windows

package desktop

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Off Windows the windows are X11's, changed through the X protocol:
// move and resize configure the top-level window, focus raises it and
// gives it the input focus, close sends WM_DELETE_WINDOW to a client that
// takes it. Minimize, maximize and restore are a window manager's to do
// and answer an error here.

type winState struct{ minimized, maximized bool }

func windowState(uint64) (winState, bool) { return winState{}, true }

// windowGone: X11 has no cheap answer for one window, so waitGone lists
// the windows instead (known is false).
func windowGone(uint64) (gone, known bool) { return false, false }

func elevated(int) bool { return false }

func selfElevated() bool { return false }

func programOf(pid int) string {
	if pid <= 0 {
		return ""
	}
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return ""
	}
	return p
}

func changeWindow(w *WindowInfo, in WindowInput) error {
	name := os.Getenv("DISPLAY")
	if name == "" {
		return errors.New("DISPLAY is not set (no X11 session)")
	}
	c, err := xgb.NewConnDisplay(name)
	if err != nil {
		return fmt.Errorf("connect to X display %s: %w", name, err)
	}
	defer c.Close()
	win := xproto.Window(w.HWND)
	switch in.Action {
	case "move":
		return xproto.ConfigureWindowChecked(c, win, xproto.ConfigWindowX|xproto.ConfigWindowY,
			[]uint32{uint32(int32(*in.X)), uint32(int32(*in.Y))}).Check()
	case "resize":
		return xproto.ConfigureWindowChecked(c, win, xproto.ConfigWindowWidth|xproto.ConfigWindowHeight,
			[]uint32{uint32(*in.W), uint32(*in.H)}).Check()
	case "focus":
		if err := xproto.ConfigureWindowChecked(c, win, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove}).Check(); err != nil {
			return err
		}
		return xproto.SetInputFocusChecked(c, xproto.InputFocusPointerRoot, win, xproto.TimeCurrentTime).Check()
	case "close":
		return closeX11(c, win)
	case "minimize", "maximize", "restore":
		return fmt.Errorf("%s is done by a desktop's window manager, which Hearth does not drive on X11", in.Action)
	}
	return fmt.Errorf("unknown action %q", in.Action)
}

// closeX11 asks the client to close its window (WM_DELETE_WINDOW), as a
// title bar's close button does.
func closeX11(c *xgb.Conn, win xproto.Window) error {
	atom := func(n string) (xproto.Atom, error) {
		r, err := xproto.InternAtom(c, false, uint16(len(n)), n).Reply()
		if err != nil {
			return 0, err
		}
		return r.Atom, nil
	}
	protocols, err := atom("WM_PROTOCOLS")
	if err != nil {
		return err
	}
	del, err := atom("WM_DELETE_WINDOW")
	if err != nil {
		return err
	}
	r, err := xproto.GetProperty(c, false, win, protocols, xproto.AtomAtom, 0, 64).Reply()
	if err != nil {
		return err
	}
	takes := false
	for i := 0; i+4 <= len(r.Value); i += 4 {
		if xproto.Atom(xgb.Get32(r.Value[i:])) == del {
			takes = true
		}
	}
	if !takes {
		return errors.New("this window takes no close request (WM_DELETE_WINDOW); close it in its app")
	}
	ev := xproto.ClientMessageEvent{Format: 32, Window: win, Type: protocols,
		Data: xproto.ClientMessageDataUnionData32New([]uint32{uint32(del), xproto.TimeCurrentTime, 0, 0, 0})}
	return xproto.SendEventChecked(c, false, win, xproto.EventMaskNoEvent, string(ev.Bytes())).Check()
}
