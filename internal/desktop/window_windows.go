//go:build windows

package desktop

import (
	"errors"
	"fmt"

	"golang.org/x/sys/windows"
)

var (
	user32               = windows.NewLazySystemDLL("user32.dll")
	procIsIconic         = user32.NewProc("IsIconic")
	procIsZoomed         = user32.NewProc("IsZoomed")
	procShowWindow       = user32.NewProc("ShowWindow")
	procSetWindowPos     = user32.NewProc("SetWindowPos")
	procSetForeground    = user32.NewProc("SetForegroundWindow")
	procPostMessageW     = user32.NewProc("PostMessageW")
	procGetWindowLongPtr = user32.NewProc("GetWindowLongPtrW")
	procGetWindow        = user32.NewProc("GetWindow")
)

const (
	swMinimize     = 6
	swMaximize     = 3
	swRestore      = 9
	swpNoSize      = 0x0001
	swpNoMove      = 0x0002
	swpNoZOrder    = 0x0004
	swpNoActivate  = 0x0010
	wmClose        = 0x0010
	gwlExStyle     = ^uintptr(19) // -20
	wsExToolWindow = 0x00000080
	gwOwner        = 4
)

type winState struct{ minimized, maximized bool }

// windowState reads a window's state; ok is false for a window a person
// does not see as one (a tool window, an owned pop-up, a hidden one).
func windowState(hwnd uint64) (winState, bool) {
	h := uintptr(hwnd)
	if !windows.IsWindow(windows.HWND(h)) {
		return winState{}, false
	}
	ex, _, _ := procGetWindowLongPtr.Call(h, gwlExStyle)
	owner, _, _ := procGetWindow.Call(h, gwOwner)
	if ex&wsExToolWindow != 0 || owner != 0 {
		return winState{}, false
	}
	ic, _, _ := procIsIconic.Call(h)
	z, _, _ := procIsZoomed.Call(h)
	st := winState{minimized: ic != 0, maximized: z != 0}
	return st, windows.IsWindowVisible(windows.HWND(h)) || st.minimized
}

// windowGone reports whether window hwnd no longer exists. IsWindow
// answers for the one window; a listing of all of them cannot, since
// Wine's EnumWindows lists none on a desktop the closed window leaves
// empty, which reads as an error rather than as the window gone.
func windowGone(hwnd uint64) (gone, known bool) {
	return !windows.IsWindow(windows.HWND(uintptr(hwnd))), true
}

// elevated reports whether process pid runs elevated; a process Hearth
// may not even query (a protected or another user's) counts as elevated,
// since Hearth cannot drive its windows either.
func elevated(pid int) bool {
	if pid == 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer tok.Close()
	return tok.IsElevated()
}

// selfElevated reports whether Hearth itself runs elevated (then Windows
// lets it change an elevated process's windows too).
func selfElevated() bool { return windows.GetCurrentProcessToken().IsElevated() }

// programOf returns the program file of process pid, or "".
func programOf(pid int) string {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return ""
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return ""
	}
	return windows.UTF16ToString(buf[:n])
}

// changeWindow does in.Action to w with user32, as the window's own
// title-bar buttons and the taskbar do; close asks the window to close
// (WM_CLOSE), which its app may answer with a save prompt.
func changeWindow(w *WindowInfo, in WindowInput) error {
	h := uintptr(w.HWND)
	show := func(cmd uintptr) error {
		procShowWindow.Call(h, cmd)
		return nil
	}
	pos := func(x, y, cx, cy int, flags uintptr) error {
		r, _, err := procSetWindowPos.Call(h, 0, uintptr(x), uintptr(y), uintptr(cx), uintptr(cy), flags|swpNoZOrder|swpNoActivate)
		if r == 0 {
			return fmt.Errorf("SetWindowPos: %w", err)
		}
		return nil
	}
	switch in.Action {
	case "minimize":
		return show(swMinimize)
	case "maximize":
		return show(swMaximize)
	case "restore":
		return show(swRestore)
	case "focus":
		if w.Minimized {
			show(swRestore)
		}
		if r, _, _ := procSetForeground.Call(h); r == 0 {
			return errors.New("Windows did not let the window come to the front (another program holds the foreground)")
		}
		return nil
	case "move":
		if w.Maximized || w.Minimized {
			show(swRestore)
		}
		return pos(*in.X, *in.Y, 0, 0, swpNoSize)
	case "resize":
		if w.Maximized || w.Minimized {
			show(swRestore)
		}
		return pos(0, 0, *in.W, *in.H, swpNoMove)
	case "close":
		if r, _, err := procPostMessageW.Call(h, wmClose, 0, 0); r == 0 {
			return fmt.Errorf("PostMessage WM_CLOSE: %w", err)
		}
		return nil
	}
	return fmt.Errorf("unknown action %q", in.Action)
}
