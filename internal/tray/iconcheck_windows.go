package tray

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// ShowStates is the selftest's look at the real notification-area icon:
// it shows the icon (RunIcon, as the tray does), draws it in each state of
// snaps in turn, and records for each what the shell and the menu hold;
// then it shows one balloon notification from the icon and removes it.
// It runs on the calling goroutine, locked to its thread for the icon's
// window. A shell without a notification area is ErrNoIcon.
//
// systray reports a failed Shell_NotifyIcon only through the standard
// logger, so that logger's output is read while the icon is up.
func ShowStates(ctx context.Context, snaps []Snapshot, notice [2]string) (IconCheck, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var logged bytes.Buffer
	var logMu sync.Mutex
	prev := log.Writer()
	log.SetOutput(writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return logged.Write(p) }))
	defer log.SetOutput(prev)

	var mu sync.Mutex
	cur := snaps[0]
	state := func() Snapshot { mu.Lock(); defer mu.Unlock(); return cur }
	t := &Tray{Hearth: Hearth{
		Status: func(context.Context) (govern.Status, error) {
			s := state()
			var st govern.Status
			st.EStop.Latched, st.EStop.Reason = s.EStop, s.EStopReason
			return st, nil
		},
		Permits: func(context.Context) ([]govern.Permit, error) { return make([]govern.Permit, state().Pending), nil },
		Tunnel:  func() tunnel.Status { return state().Tunnel },
	}}
	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	var res IconCheck
	driven := make(chan error, 1)
	go func() {
		defer halt()
		driven <- drive(ctx, stop, t, snaps, func(s Snapshot) { mu.Lock(); cur = s; mu.Unlock() }, notice, &res, func() string {
			logMu.Lock()
			defer logMu.Unlock()
			s := logged.String()
			logged.Reset()
			return s
		})
	}()
	err := RunIcon(ctx, t, stop, func() {})
	if err != nil {
		halt()
		<-driven
		return IconCheck{}, err
	}
	if err := <-driven; err != nil {
		return res, err
	}
	return res, nil
}

// IconCheck is what ShowStates saw.
type IconCheck struct {
	States []StateCheck
	// Notice is the error of showing the balloon notification (nil: the
	// shell took it).
	Notice error
}

// StateCheck is one state as shown.
type StateCheck struct {
	View View
	// Rect is the icon's place as the shell reports it
	// (Shell_NotifyIconGetRect), proving the icon is in the notification
	// area; RectErr says why it could not be read.
	Rect    [4]int32
	RectErr error
	// ShellErr is what systray logged while drawing the state (a refused
	// Shell_NotifyIcon), "" when nothing.
	ShellErr string
	// Menu is each menu entry as the menu holds it, against View.Entries.
	Menu []MenuCheck
}

// MenuCheck is one menu entry as the menu holds it.
type MenuCheck struct {
	Title    string
	Disabled bool
	Checked  bool
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// drive waits for the icon, then shows each snapshot and reads back what
// the shell and the menu hold.
func drive(ctx context.Context, stop <-chan struct{}, t *Tray, snaps []Snapshot, set func(Snapshot), notice [2]string, res *IconCheck, logs func() string) error {
	ic, err := waitIcon(ctx, stop, t)
	if err != nil {
		return err
	}
	hwnd, err := iconWindow()
	if err != nil {
		return err
	}
	for _, s := range snaps {
		set(s)
		t.Refresh(ctx)
		v := t.View()
		if v != Render(s) {
			return fmt.Errorf("the icon shows %+v for state %+v", v, s)
		}
		sc := StateCheck{View: v}
		sc.Rect, sc.RectErr = iconRect(hwnd)
		sc.ShellErr = systrayErrors(logs())
		for _, it := range ic.items {
			sc.Menu = append(sc.Menu, MenuCheck{Title: menuTitle(it.String()), Disabled: it.Disabled(), Checked: it.Checked()})
		}
		res.States = append(res.States, sc)
	}
	res.Notice = balloon(hwnd, notice[0], notice[1])
	if l := systrayErrors(logs()); l != "" && res.Notice == nil {
		res.Notice = errors.New(l)
	}
	return nil
}

// systrayErrors are the lines systray logged about itself ("systray
// error: …"); whatever else wrote to the standard logger meanwhile is not
// the icon's.
func systrayErrors(logged string) string {
	var out []string
	for _, l := range strings.Split(logged, "\n") {
		if strings.Contains(l, "systray") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return strings.Join(out, "; ")
}

// waitIcon waits until RunIcon has set t.UI.
func waitIcon(ctx context.Context, stop <-chan struct{}, t *Tray) (*icon, error) {
	for {
		// RunIcon sets t.UI before it starts t.Run, whose first Refresh
		// sets shown under t.mu: once shown is seen, t.UI is safe to read.
		t.mu.Lock()
		shown := t.shown
		t.mu.Unlock()
		if shown {
			if ui, ok := t.UI.(*icon); ok {
				return ui, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-stop:
			return nil, ErrNoIcon
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// menuTitle takes the title out of systray's MenuItem[id, "title"].
func menuTitle(s string) string {
	i := strings.Index(s, `"`)
	j := strings.LastIndex(s, `"`)
	if i < 0 || j <= i {
		return s
	}
	var out string
	if _, err := fmt.Sscanf(s[i:j+1], "%q", &out); err != nil {
		return s[i+1 : j]
	}
	return out
}

var (
	procShellNotifyIconGetRect  = shell32.NewProc("Shell_NotifyIconGetRect")
	procGetClassNameW           = user32.NewProc("GetClassNameW")
	procGetWindowThreadProcessI = user32.NewProc("GetWindowThreadProcessId")
)

// systrayClass and systrayID are the window class and icon id fyne.io/systray
// registers its icon under.
const (
	systrayClass = "SystrayClass"
	systrayID    = 100
)

// iconWindow finds systray's window among this process's.
func iconWindow() (windows.HWND, error) {
	var found windows.HWND
	pid := windows.GetCurrentProcessId()
	cb := syscall.NewCallback(func(h windows.HWND, _ uintptr) uintptr {
		var p uint32
		procGetWindowThreadProcessI.Call(uintptr(h), uintptr(unsafe.Pointer(&p)))
		if p != pid {
			return 1
		}
		buf := make([]uint16, 64)
		n, _, _ := procGetClassNameW.Call(uintptr(h), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if windows.UTF16ToString(buf[:n]) == systrayClass {
			found = h
			return 0
		}
		return 1
	})
	windows.EnumWindows(cb, nil)
	if found == 0 {
		return 0, errors.New("the icon's window (class SystrayClass) is not among this process's windows")
	}
	return found, nil
}

// iconRect asks the shell where the icon is.
func iconRect(hwnd windows.HWND) ([4]int32, error) {
	id := struct {
		size uint32
		hwnd windows.HWND
		uID  uint32
		guid windows.GUID
	}{hwnd: hwnd, uID: systrayID}
	id.size = uint32(unsafe.Sizeof(id))
	var rc [4]int32
	hr, _, _ := procShellNotifyIconGetRect.Call(uintptr(unsafe.Pointer(&id)), uintptr(unsafe.Pointer(&rc)))
	if int32(hr) < 0 {
		return rc, fmt.Errorf("Shell_NotifyIconGetRect: HRESULT 0x%08X", uint32(hr))
	}
	return rc, nil
}

// balloon shows a notification from the icon (NIM_MODIFY with NIF_INFO).
func balloon(hwnd windows.HWND, title, text string) error {
	const nimModify, nifInfo, niifInfo = 1, 0x10, 0x1
	d := notifyIconData{Wnd: windows.Handle(hwnd), ID: systrayID, Flags: nifInfo, InfoFlags: niifInfo}
	d.Size = uint32(unsafe.Sizeof(d))
	t, err := windows.UTF16FromString(title)
	if err != nil {
		return err
	}
	m, err := windows.UTF16FromString(text)
	if err != nil {
		return err
	}
	copy(d.InfoTitle[:len(d.InfoTitle)-1], t)
	copy(d.Info[:len(d.Info)-1], m)
	if r, _, err := procShellNotifyIconW.Call(nimModify, uintptr(unsafe.Pointer(&d))); r == 0 {
		return fmt.Errorf("Shell_NotifyIcon(NIM_MODIFY, NIF_INFO): %v", err)
	}
	return nil
}
