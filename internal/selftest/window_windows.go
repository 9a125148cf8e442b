package selftest

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The fixture windows, in plain Win32: a registered window class whose
// procedure counts button clicks and notes which control took the focus,
// with the standard BUTTON, EDIT and LISTBOX controls as children.

var (
	user32                    = windows.NewLazySystemDLL("user32.dll")
	kernel32                  = windows.NewLazySystemDLL("kernel32.dll")
	procRegisterClassExW      = user32.NewProc("RegisterClassExW")
	procUnregisterClassW      = user32.NewProc("UnregisterClassW")
	procCreateWindowExW       = user32.NewProc("CreateWindowExW")
	procDestroyWindow         = user32.NewProc("DestroyWindow")
	procDefWindowProcW        = user32.NewProc("DefWindowProcW")
	procGetMessageW           = user32.NewProc("GetMessageW")
	procTranslateMessage      = user32.NewProc("TranslateMessage")
	procDispatchMessageW      = user32.NewProc("DispatchMessageW")
	procSendMessageW          = user32.NewProc("SendMessageW")
	procPostQuitMessage       = user32.NewProc("PostQuitMessage")
	procShowWindow            = user32.NewProc("ShowWindow")
	procInternalGetWindowText = user32.NewProc("InternalGetWindowText")
	procGetWindowTextLen      = user32.NewProc("GetWindowTextLengthW")
	procGetModuleHandleW      = kernel32.NewProc("GetModuleHandleW")
)

// Window messages and notifications the fixture uses.
const (
	wmClose       = 0x0010
	wmSetText     = 0x000C
	wmGetText     = 0x000D
	wmCommand     = 0x0111
	wmUser        = 0x0400
	wmFixtureQuit = wmUser + 1
	bnClicked     = 0
	bnSetFocus    = 6
	enSetFocus    = 0x0100
	lbnSetFocus   = 4
	bmGetCheck    = 0x00F0
	bmSetCheck    = 0x00F1
	bmClick       = 0x00F5
	lbAddString   = 0x0180
	lbGetCount    = 0x018B
	lbGetCurSel   = 0x0188
	wsOverlapped  = 0x00CF0000 // WS_OVERLAPPEDWINDOW
	wsVisible     = 0x10000000
	wsChild       = 0x40000000
	swShowNormal  = 1
)

type wndClassEx struct {
	size, style                        uint32
	wndProc                            uintptr
	clsExtra, wndExtra                 int32
	instance, icon, cursor, background windows.Handle
	menuName, className                *uint16
	iconSm                             windows.Handle
}

type winMsg struct {
	hwnd    windows.HWND
	message uint32
	wParam  uintptr
	lParam  uintptr
	time    uint32
	pt      struct{ x, y int32 }
	private uint32
}

// fixtureWindows are a fixture's live windows. Their procedure runs on the
// thread that made them; the counters are read from any goroutine.
type fixtureWindows struct {
	f           Fixture
	main, panel windows.HWND
	ctl         map[int]windows.HWND
	class       *uint16
	instance    windows.Handle
	thread      uint32

	clicks, panelClicks, focus atomic.Int64
	closed                     chan struct{}
	closeOnce                  sync.Once
}

// openFixture makes f's windows on a thread of their own, which runs their
// message loop until Close.
func openFixture(f Fixture) (*fixtureWindows, error) {
	w := &fixtureWindows{f: f, ctl: map[int]windows.HWND{}, closed: make(chan struct{})}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(w.closed)
		if err := w.create(); err != nil {
			w.destroy()
			errc <- err
			return
		}
		errc <- nil
		var m winMsg
		for {
			r, _, _ := procGetMessageW.Call(uintptr(unsafe.Pointer(&m)), 0, 0, 0)
			if int32(r) <= 0 {
				break
			}
			if m.message == wmFixtureQuit && m.hwnd == 0 {
				w.destroy()
				continue
			}
			procTranslateMessage.Call(uintptr(unsafe.Pointer(&m)))
			procDispatchMessageW.Call(uintptr(unsafe.Pointer(&m)))
		}
		w.destroy()
	}()
	if err := <-errc; err != nil {
		return nil, err
	}
	return w, nil
}

func (w *fixtureWindows) create() error {
	w.thread = windows.GetCurrentThreadId()
	h, _, _ := procGetModuleHandleW.Call(0)
	w.instance = windows.Handle(h)
	var err error
	if w.class, err = windows.UTF16PtrFromString("HearthSelftestFixture" + fmt.Sprint(windows.GetCurrentProcessId())); err != nil {
		return err
	}
	wc := wndClassEx{wndProc: windows.NewCallback(w.proc), instance: w.instance, className: w.class, background: windows.Handle(16)}
	wc.size = uint32(unsafe.Sizeof(wc))
	if r, _, err := procRegisterClassExW.Call(uintptr(unsafe.Pointer(&wc))); r == 0 {
		return fmt.Errorf("RegisterClassEx: %v", err)
	}
	if w.main, err = w.window(w.f.Title, w.f.W, w.f.H, 40); err != nil {
		return err
	}
	for _, c := range w.f.Controls {
		h, err := w.child(w.main, c)
		if err != nil {
			return err
		}
		w.ctl[c.ID] = h
	}
	for _, it := range ListItems {
		p, _ := windows.UTF16PtrFromString(it)
		procSendMessageW.Call(uintptr(w.ctl[IDList]), lbAddString, 0, uintptr(unsafe.Pointer(p)))
	}
	if w.panel, err = w.window(w.f.PanelTitle, 260, 140, 480); err != nil {
		return err
	}
	ph, err := w.child(w.panel, w.f.Panel)
	if err != nil {
		return err
	}
	w.ctl[w.f.Panel.ID] = ph
	for _, h := range []windows.HWND{w.panel, w.main} {
		procShowWindow.Call(uintptr(h), swShowNormal)
	}
	return nil
}

func (w *fixtureWindows) window(title string, width, height, x int) (windows.HWND, error) {
	t, err := windows.UTF16PtrFromString(title)
	if err != nil {
		return 0, err
	}
	h, _, err := procCreateWindowExW.Call(0, uintptr(unsafe.Pointer(w.class)), uintptr(unsafe.Pointer(t)),
		wsOverlapped|wsVisible, uintptr(x), 40, uintptr(width), uintptr(height), 0, 0, uintptr(w.instance), 0)
	if h == 0 {
		return 0, fmt.Errorf("CreateWindowEx %q: %v", title, err)
	}
	return windows.HWND(h), nil
}

func (w *fixtureWindows) child(parent windows.HWND, c Control) (windows.HWND, error) {
	cls, err := windows.UTF16PtrFromString(c.Class)
	if err != nil {
		return 0, err
	}
	text, err := windows.UTF16PtrFromString(c.Text)
	if err != nil {
		return 0, err
	}
	h, _, err := procCreateWindowExW.Call(0, uintptr(unsafe.Pointer(cls)), uintptr(unsafe.Pointer(text)),
		uintptr(wsChild|wsVisible|c.Style), uintptr(c.X), uintptr(c.Y), uintptr(c.W), uintptr(c.H),
		uintptr(parent), uintptr(c.ID), uintptr(w.instance), 0)
	if h == 0 {
		return 0, fmt.Errorf("CreateWindowEx %s %d: %v", c.Class, c.ID, err)
	}
	return windows.HWND(h), nil
}

// proc is the fixture windows' procedure: it counts clicks (BN_CLICKED of
// the two push buttons) and notes focus changes.
func (w *fixtureWindows) proc(hwnd windows.HWND, msg uint32, wParam, lParam uintptr) uintptr {
	switch msg {
	case wmCommand:
		id, code := int(wParam&0xFFFF), uint32(wParam>>16)
		switch {
		case code == bnClicked && id == IDButton:
			w.clicks.Add(1)
		case code == bnClicked && id == IDPanelButton:
			w.panelClicks.Add(1)
		case code == bnSetFocus || code == enSetFocus || (code == lbnSetFocus && id == IDList):
			w.focus.Store(int64(id))
		}
		return 0
	case wmClose:
		// Only the fixture's owner ends it (quit or end of input).
		return 0
	}
	r, _, _ := procDefWindowProcW.Call(uintptr(hwnd), uintptr(msg), wParam, lParam)
	return r
}

// destroy destroys the windows and unregisters the class, on the windows'
// thread; it is safe to call more than once.
func (w *fixtureWindows) destroy() {
	for _, h := range []*windows.HWND{&w.panel, &w.main} {
		if *h != 0 {
			procDestroyWindow.Call(uintptr(*h))
			*h = 0
		}
	}
	if w.class != nil {
		procUnregisterClassW.Call(uintptr(unsafe.Pointer(w.class)), uintptr(w.instance))
		w.class = nil
	}
	procPostQuitMessage.Call(0)
}

// Close ends the windows' thread and waits for it.
func (w *fixtureWindows) Close() {
	w.closeOnce.Do(func() {
		procPostThreadMessage.Call(uintptr(w.thread), wmFixtureQuit, 0, 0)
	})
	<-w.closed
}

var procPostThreadMessage = user32.NewProc("PostThreadMessageW")

// State reads the windows' state. Reading a control's text or check state
// sends it a message, which its thread answers.
func (w *fixtureWindows) State() State {
	send := func(id int, msg uint32, wp, lp uintptr) uintptr {
		r, _, _ := procSendMessageW.Call(uintptr(w.ctl[id]), uintptr(msg), wp, lp)
		return r
	}
	sel := int(int32(send(IDList, lbGetCurSel, 0, 0)))
	return State{
		Clicks: int(w.clicks.Load()), PanelClicks: int(w.panelClicks.Load()),
		Edit:    windowText(w.ctl[IDEdit]),
		Checked: send(IDCheckBox, bmGetCheck, 0, 0) == 1,
		Focus:   int(w.focus.Load()),
		Items:   int(send(IDList, lbGetCount, 0, 0)),
		// LB_ERR (-1): nothing selected.
		Selected: sel,
	}
}

// HWND and PanelHWND are the two top-level windows.
func (w *fixtureWindows) HWND() uint64      { return uint64(w.main) }
func (w *fixtureWindows) PanelHWND() uint64 { return uint64(w.panel) }

// windowText reads a window's text through WM_GETTEXT.
func windowText(h windows.HWND) string {
	n, _, _ := procGetWindowTextLen.Call(uintptr(h))
	buf := make([]uint16, n+1)
	procSendMessageW.Call(uintptr(h), wmGetText, uintptr(len(buf)), uintptr(unsafe.Pointer(&buf[0])))
	return windows.UTF16ToString(buf)
}

// click, setText and check drive the controls with their own messages
// (BM_CLICK, WM_SETTEXT, BM_SETCHECK), not UI Automation: how the
// fixture's own test proves the window works where UI Automation does not
// exist (Wine).
func (w *fixtureWindows) click(id int) {
	procSendMessageW.Call(uintptr(w.ctl[id]), bmClick, 0, 0)
}

func (w *fixtureWindows) setText(id int, s string) error {
	p, err := windows.UTF16PtrFromString(s)
	if err != nil {
		return err
	}
	procSendMessageW.Call(uintptr(w.ctl[id]), wmSetText, 0, uintptr(unsafe.Pointer(p)))
	return nil
}

func (w *fixtureWindows) check(id int, on bool) {
	v := uintptr(0)
	if on {
		v = 1
	}
	procSendMessageW.Call(uintptr(w.ctl[id]), bmSetCheck, v, 0)
}

// findWindows lists the top-level windows titled title, of any process.
func findWindows(title string) ([]uint64, error) {
	var found []uint64
	// InternalGetWindowText reads the title without sending the window a
	// message: GetWindowText would send one to a window of this process,
	// and wait forever for a window whose thread runs no message loop.
	buf := make([]uint16, 512)
	cb := syscall.NewCallback(func(h windows.HWND, _ uintptr) uintptr {
		n, _, _ := procInternalGetWindowText.Call(uintptr(h), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if n > 0 && windows.UTF16ToString(buf[:n]) == title {
			found = append(found, uint64(h))
		}
		return 1
	})
	if err := windows.EnumWindows(cb, nil); err != nil && !errors.Is(err, windows.ERROR_SUCCESS) {
		return nil, fmt.Errorf("EnumWindows: %w", err)
	}
	return found, nil
}
