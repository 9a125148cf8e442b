package uia

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/screen"
)

var (
	moduser32                     = windows.NewLazySystemDLL("user32.dll")
	procGetProcessWindowStation   = moduser32.NewProc("GetProcessWindowStation")
	procGetUserObjectInformationW = moduser32.NewProc("GetUserObjectInformationW")
	procSetForegroundWindow       = moduser32.NewProc("SetForegroundWindow")
	procGetAncestor               = moduser32.NewProc("GetAncestor")
	procIsChild                   = moduser32.NewProc("IsChild")
	procIsIconic                  = moduser32.NewProc("IsIconic")
	procShowWindow                = moduser32.NewProc("ShowWindow")
	procWindowFromPoint           = moduser32.NewProc("WindowFromPoint")
	procSetCursorPos              = moduser32.NewProc("SetCursorPos")
	procSendInput                 = moduser32.NewProc("SendInput")
	procMapVirtualKeyW            = moduser32.NewProc("MapVirtualKeyW")
	procInternalGetWindowText     = moduser32.NewProc("InternalGetWindowText")
)

const (
	uoiFlags   = 1
	wsfVisible = 1
	gaRoot     = 2
	swRestore  = 9

	inputMouse          = 0
	inputKeyboard       = 1
	mouseLeftDown       = 0x0002
	mouseLeftUp         = 0x0004
	keyExtended         = 0x0001
	keyUp               = 0x0002
	mapVirtualKeyToScan = 0
)

// InteractiveDesktop checks that Hearth runs in the interactive window
// station and that the input desktop is the user's own ("Default"): a
// locked workstation, a UAC prompt or the sign-in screen put input on
// another desktop, which OpenInputDesktop cannot open or names otherwise
// (screen.InputDesktop decides).
func (p *winProvider) InteractiveDesktop() error {
	ws, _, err := procGetProcessWindowStation.Call()
	if ws == 0 {
		return fmt.Errorf("Hearth has no window station: %v", err)
	}
	var flags struct {
		inherit, reserved int32
		flags             uint32
	}
	var need uint32
	if r, _, err := procGetUserObjectInformationW.Call(ws, uoiFlags, uintptr(unsafe.Pointer(&flags)), unsafe.Sizeof(flags), uintptr(unsafe.Pointer(&need))); r == 0 {
		return fmt.Errorf("read the window station's flags: %v", err)
	}
	if flags.flags&wsfVisible == 0 {
		return errors.New("Hearth runs in a non-interactive window station (as a service, or as a task that does not run as the signed-in user)")
	}
	return screen.InputDesktop()
}

func tokenElevated(t windows.Token) (bool, error) {
	var v, n uint32
	if err := windows.GetTokenInformation(t, windows.TokenElevation, (*byte)(unsafe.Pointer(&v)), uint32(unsafe.Sizeof(v)), &n); err != nil {
		return false, fmt.Errorf("read token elevation: %w", err)
	}
	return v != 0, nil
}

// Elevated compares the elevation of process pid with Hearth's own. A
// process whose token Hearth may not even open is more privileged than
// Hearth (an elevated or another user's process): UIPI would drop input
// to it, so it counts as elevated.
func (p *winProvider) Elevated(pid int) (bool, error) {
	if pid <= 0 {
		return false, errors.New("the element reports no process id")
	}
	self, err := tokenElevated(windows.GetCurrentProcessToken())
	if err != nil {
		return false, err
	}
	if self {
		return false, nil
	}
	return processElevated(pid)
}

// processElevated reads the elevation of pid's token; a token Hearth may
// not open counts as elevated.
func processElevated(pid int) (bool, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	err = windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok)
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("open the token of process %d: %w", pid, err)
	}
	defer tok.Close()
	return tokenElevated(tok)
}

func ancestor(h windows.HWND) windows.HWND {
	r, _, _ := procGetAncestor.Call(uintptr(h), gaRoot)
	return windows.HWND(r)
}

// maxTitle bounds the title TopLevel reads, in UTF-16 units; the panel's
// title ends every page title, well inside it.
const maxTitle = 2048

// TopLevel resolves hwnd to its top-level window with GetAncestor(GA_ROOT)
// and reads that window's owner and title. The title comes from
// InternalGetWindowText, which reads the window's stored text: unlike
// GetWindowText it never sends WM_GETTEXT, which a hung window (or one of
// Hearth's own, whose thread may be busy) would leave unanswered.
func (p *winProvider) TopLevel(hwnd uint64) (Window, error) {
	h := windows.HWND(uintptr(hwnd))
	if hwnd == 0 || !windows.IsWindow(h) {
		return Window{}, fmt.Errorf("hwnd %d is not a window: %w", hwnd, ErrNotFound)
	}
	top := ancestor(h)
	if top == 0 {
		// The desktop window has no root above it.
		top = h
	}
	var pid uint32
	if _, err := windows.GetWindowThreadProcessId(top, &pid); err != nil {
		if !windows.IsWindow(top) {
			return Window{}, fmt.Errorf("window %d vanished: %w", uintptr(top), ErrNotFound)
		}
		return Window{}, fmt.Errorf("find the process of window %d: %w", uintptr(top), err)
	}
	buf := make([]uint16, maxTitle)
	n, _, _ := procInternalGetWindowText.Call(uintptr(top), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return Window{HWND: uint64(top), Title: windows.UTF16ToString(buf[:min(int(n), len(buf))]), ProcessID: int(pid)}, nil
}

func windowFromPoint(x, y int32) windows.HWND {
	var r uintptr
	if unsafe.Sizeof(uintptr(0)) == 8 {
		// POINT is passed by value: in one register on 64-bit Windows.
		r, _, _ = procWindowFromPoint.Call(uintptr(uint64(uint32(x)) | uint64(uint32(y))<<32))
	} else {
		r, _, _ = procWindowFromPoint.Call(uintptr(x), uintptr(y))
	}
	return windows.HWND(r)
}

// within reports whether h is w or one of its descendants.
func within(h, w windows.HWND) bool {
	if h == w {
		return true
	}
	r, _, _ := procIsChild.Call(uintptr(w), uintptr(h))
	return r != 0
}

// windowOf returns the nearest native window of el or its ancestors.
func (p *winProvider) windowOf(el *iface) (windows.HWND, error) {
	cur, owned := el, false
	defer func() {
		if owned {
			cur.release()
		}
	}()
	for range 64 {
		var h uintptr
		if cur.call(elNativeWindowHandle, uintptr(unsafe.Pointer(&h))) == nil && h != 0 {
			return windows.HWND(h), nil
		}
		var parent *iface
		if err := p.walker.call(walkGetParent, uintptr(unsafe.Pointer(cur)), uintptr(unsafe.Pointer(&parent))); err != nil {
			return 0, fmt.Errorf("find the element's window: %w", err)
		}
		if owned {
			cur.release()
		}
		if parent == nil {
			owned = false
			break
		}
		cur, owned = parent, true
	}
	return 0, errors.New("the element belongs to no window")
}

// scopedWindow returns the top-level window fallback input goes to and the
// window (or process) a click must land in, checking that el lies there.
func (p *winProvider) scopedWindow(s Scope, el *iface) (top, scoped windows.HWND, err error) {
	h, err := p.windowOf(el)
	if err != nil {
		return 0, 0, err
	}
	top = ancestor(h)
	switch {
	case s.HWND != 0:
		scoped = windows.HWND(uintptr(s.HWND))
		if ancestor(scoped) != top || !within(h, scoped) && !within(scoped, h) {
			return 0, 0, fmt.Errorf("the element is not in window %d", s.HWND)
		}
	default:
		var pid uint32
		if _, err := windows.GetWindowThreadProcessId(top, &pid); err != nil || int(pid) != s.ProcessID {
			return 0, 0, fmt.Errorf("the element's window does not belong to process %d", s.ProcessID)
		}
		scoped = top
	}
	return top, scoped, nil
}

func waitForeground(top windows.HWND) bool {
	for range 10 {
		if windows.GetForegroundWindow() == top {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// foreground brings top to the front: SetForegroundWindow, then UI
// Automation's own focus change, which Windows' foreground lock allows
// more often. It never presses keys to get around the lock.
func (p *winProvider) foreground(top windows.HWND) error {
	if windows.GetForegroundWindow() == top {
		return nil
	}
	if r, _, _ := procIsIconic.Call(uintptr(top)); r != 0 {
		procShowWindow.Call(uintptr(top), swRestore)
	}
	procSetForegroundWindow.Call(uintptr(top))
	if waitForeground(top) {
		return nil
	}
	var el *iface
	if p.auto != nil && p.auto.call(autoElementFromHandle, uintptr(top), uintptr(unsafe.Pointer(&el))) == nil && el != nil {
		el.call(elSetFocus)
		el.release()
		if waitForeground(top) {
			return nil
		}
	}
	return fmt.Errorf("%w: Windows did not let Hearth bring window %d to the front", ErrNotForeground, uintptr(top))
}

type mouseInput struct {
	dx, dy                 int32
	mouseData, flags, time uint32
	extra                  uintptr
}

type keybdInput struct {
	vk, scan    uint16
	flags, time uint32
	extra       uintptr
}

// INPUT is a tagged union whose size is that of its largest member,
// MOUSEINPUT; keyInput pads KEYBDINPUT to the same size.
type mouseEvent struct {
	typ uint32
	mi  mouseInput
}

type keyEvent struct {
	typ uint32
	ki  keybdInput
	_   [8]byte
}

// The two INPUT shapes must have the same size (the index is 0 only then).
var _ = [1]struct{}{}[unsafe.Sizeof(mouseEvent{})-unsafe.Sizeof(keyEvent{})]

func sendInput[T mouseEvent | keyEvent](events []T) error {
	var zero T
	n, _, err := procSendInput.Call(uintptr(len(events)), uintptr(unsafe.Pointer(&events[0])), unsafe.Sizeof(zero))
	if int(n) != len(events) {
		return fmt.Errorf("SendInput delivered %d of %d events (input blocked by another desktop or by a more privileged window): %v", n, len(events), err)
	}
	return nil
}

// Click clicks the center of el with the left button, after bringing the
// scoped window to the front and checking that the point lands in it.
func (p *winProvider) Click(s Scope, r Ref) error {
	el := r.(*iface)
	top, scoped, err := p.scopedWindow(s, el)
	if err != nil {
		return err
	}
	if err := p.foreground(top); err != nil {
		return err
	}
	var rc rect
	if err := el.call(elBoundingRectangle, uintptr(unsafe.Pointer(&rc))); err != nil {
		return fmt.Errorf("read the element's bounds: %w", err)
	}
	if rc.right <= rc.left || rc.bottom <= rc.top {
		return fmt.Errorf("the element has no area to click: %w", ErrUnsupported)
	}
	x, y := rc.left+(rc.right-rc.left)/2, rc.top+(rc.bottom-rc.top)/2
	if hit := windowFromPoint(x, y); hit == 0 || !within(hit, scoped) {
		return fmt.Errorf("%w: another window covers the target at (%d, %d)", ErrNotForeground, x, y)
	}
	if windows.GetForegroundWindow() != top {
		return fmt.Errorf("%w: the window lost the foreground", ErrNotForeground)
	}
	if ok, _, err := procSetCursorPos.Call(uintptr(x), uintptr(y)); ok == 0 {
		return fmt.Errorf("SetCursorPos: %v", err)
	}
	return sendInput([]mouseEvent{
		{typ: inputMouse, mi: mouseInput{flags: mouseLeftDown}},
		{typ: inputMouse, mi: mouseInput{flags: mouseLeftUp}},
	})
}

// extendedKeys are virtual keys sent with KEYEVENTF_EXTENDEDKEY (the
// navigation block, Windows keys, right-hand modifiers, numpad divide,
// Num Lock).
func extendedKey(vk uint16) bool {
	return vk >= 0x21 && vk <= 0x28 || vk == 0x2D || vk == 0x2E || vk == 0x5B || vk == 0x5C || vk == 0x5D ||
		vk == 0x6F || vk == 0x90 || vk == 0xA3 || vk == 0xA5
}

// Key focuses el through UI Automation, checks that its window is in the
// foreground, and presses and releases vk.
func (p *winProvider) Key(s Scope, r Ref, vk uint16) error {
	el := r.(*iface)
	top, _, err := p.scopedWindow(s, el)
	if err != nil {
		return err
	}
	if err := p.foreground(top); err != nil {
		return err
	}
	if err := el.call(elSetFocus); err != nil {
		return fmt.Errorf("focus the target: %w", err)
	}
	if windows.GetForegroundWindow() != top {
		return fmt.Errorf("%w: the window lost the foreground", ErrNotForeground)
	}
	scan, _, _ := procMapVirtualKeyW.Call(uintptr(vk), mapVirtualKeyToScan)
	var flags uint32
	if extendedKey(vk) {
		flags = keyExtended
	}
	return sendInput([]keyEvent{
		{typ: inputKeyboard, ki: keybdInput{vk: vk, scan: uint16(scan), flags: flags}},
		{typ: inputKeyboard, ki: keybdInput{vk: vk, scan: uint16(scan), flags: flags | keyUp}},
	})
}
