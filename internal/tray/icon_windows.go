package tray

import (
	"context"
	"errors"
	"time"
	"unsafe"

	"fyne.io/systray"
	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/assets"
)

// ErrNoIcon is returned by RunIcon when Windows offered no notification
// area (no interactive desktop, such as a service session, or Wine without
// a display). Hearth can keep serving without its icon.
var ErrNoIcon = errors.New("the notification-area icon could not be created")

// iconReadyWait bounds how long RunIcon waits for systray to report the
// icon created. systray creates it synchronously and only logs a failure,
// so a working shell answers within microseconds.
const iconReadyWait = 3 * time.Second

var (
	user32               = windows.NewLazySystemDLL("user32.dll")
	procGetMessageW      = user32.NewProc("GetMessageW")
	procTranslateMessage = user32.NewProc("TranslateMessage")
	procDispatchMessageW = user32.NewProc("DispatchMessageW")
)

// icon draws a View with fyne.io/systray.
type icon struct {
	items [numItems]*systray.MenuItem
	shown View
	first bool
}

// RunIcon shows t in the notification area: it sets t.UI, runs t (Run)
// and routes menu clicks to t.Click, until stop is closed; then it removes
// the icon and returns. It must be called on the goroutine of the thread
// that owns the icon's window: fyne.io/systray's package initialization
// locks the main goroutine to the main thread, so call it from main's
// goroutine, and it runs that thread's message loop.
//
// onEnd runs when Windows ends the session (logoff, shutdown), on this
// thread, and again when the icon is removed: it should shut Hearth down
// and return when that is done, because the process may be ended as soon
// as it returns; it must be safe to call twice.
//
// When the icon cannot be created RunIcon returns ErrNoIcon after a few
// seconds (or nil at once if stop closes meanwhile), having started
// nothing.
func RunIcon(ctx context.Context, t *Tray, stop <-chan struct{}, onEnd func()) error {
	ready := make(chan struct{})
	systray.Register(func() { close(ready) }, onEnd)
	select {
	case <-ready:
	case <-stop:
		return nil
	case <-time.After(iconReadyWait):
		return ErrNoIcon
	}
	ic := &icon{first: true}
	systray.SetTitle("Hearth")
	ic.items[ItemOpenPanel] = systray.AddMenuItem("Open control panel", "")
	ic.items[ItemOpenChatGPT] = systray.AddMenuItem("Open ChatGPT", "")
	ic.items[ItemPermits] = systray.AddMenuItem("Pending permits", "")
	ic.items[ItemUpdate] = systray.AddMenuItem("Update", "")
	systray.AddSeparator()
	ic.items[ItemEStop] = systray.AddMenuItem("Emergency stop", "")
	systray.AddSeparator()
	ic.items[ItemTunnel] = systray.AddMenuItem("Tunnel", "")
	ic.items[ItemAutostart] = systray.AddMenuItemCheckbox("Start at logon", "", false)
	systray.AddSeparator()
	ic.items[ItemQuit] = systray.AddMenuItem("Quit Hearth", "")
	t.UI = ic
	for i, it := range ic.items {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-it.ClickedCh:
					t.Click(ctx, Item(i))
				}
			}
		}()
	}
	go t.Run(ctx)
	go func() {
		<-stop
		systray.Quit()
	}()
	messageLoop()
	return nil
}

// Show draws v, touching only what changed since the last View.
func (ic *icon) Show(v View) {
	if ic.first || v.Icon != ic.shown.Icon {
		if b, err := assets.Icon(v.Icon); err == nil {
			systray.SetIcon(b)
		}
	}
	if ic.first || v.Tooltip != ic.shown.Tooltip {
		systray.SetTooltip(v.Tooltip)
	}
	for i, e := range v.Entries {
		if !ic.first && e == ic.shown.Entries[i] {
			continue
		}
		it := ic.items[i]
		it.SetTitle(e.Title)
		it.SetTooltip(e.Tooltip)
		if e.Checked {
			it.Check()
		} else {
			it.Uncheck()
		}
		if e.Disabled {
			it.Disable()
		} else {
			it.Enable()
		}
		if e.Hidden {
			it.Hide()
		} else {
			it.Show()
		}
	}
	ic.shown, ic.first = v, false
}

// msg is Win32's MSG.
type msg struct {
	hwnd    windows.Handle
	message uint32
	wParam  uintptr
	lParam  uintptr
	time    uint32
	pt      struct{ x, y int32 }
	private uint32
}

// messageLoop dispatches this thread's window messages until WM_QUIT
// (systray.Quit destroys the icon's window, which posts it). systray's own
// loop is not used because systray.Run would register the icon a second
// time.
func messageLoop() {
	var m msg
	for {
		r, _, _ := procGetMessageW.Call(uintptr(unsafe.Pointer(&m)), 0, 0, 0)
		if int32(r) <= 0 {
			return
		}
		procTranslateMessage.Call(uintptr(unsafe.Pointer(&m)))
		procDispatchMessageW.Call(uintptr(unsafe.Pointer(&m)))
	}
}
