package tray

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/assets"
)

// Balloons shows Notices as Windows notifications: Shell_NotifyIcon with
// NIF_INFO, which Windows 10 and 11 show as a toast. fyne.io/systray owns
// the tray's icon and neither exposes its window nor routes the balloon
// messages, so Balloons has a hidden window and a notify icon of its own,
// added for a notification and removed when the notification is clicked
// or goes away. Clicking the notification (or that icon) calls onClick
// with the notice's page.
type Balloons struct {
	onClick func(page string)
	log     *slog.Logger

	class *uint16
	hwnd  windows.Handle
	icons map[NoticeKind]windows.Handle
	done  chan struct{}

	// show serializes Show calls. Show hands its notice to the window's
	// thread (req, answered in reqErr) with SendMessage, which returns
	// once the window procedure has handled it: every Shell_NotifyIcon
	// call and the state below belong to that thread alone, so a message
	// the shell sends back while a call is in progress never waits for a
	// lock.
	show   sync.Mutex
	req    Notice
	reqErr error
	closed bool

	added bool   // the notify icon is there
	page  string // the page of the notification shown
	// shell is Shell_NotifyIcon (tests under Wine, which has no
	// notification area, put a fake in its place).
	shell func(message uintptr, nid *notifyIconData) error
}

// shellNotifyIcon calls Shell_NotifyIconW.
func shellNotifyIcon(message uintptr, nid *notifyIconData) error {
	if r, _, err := procShellNotifyIconW.Call(message, uintptr(unsafe.Pointer(nid))); r == 0 {
		return err
	}
	return nil
}

// Shell_NotifyIcon and window constants.
const (
	nimAdd        = 0x0
	nimModify     = 0x1
	nimDelete     = 0x2
	nimSetVersion = 0x4

	nifMessage = 0x01
	nifIcon    = 0x02
	nifTip     = 0x04
	nifInfo    = 0x10

	niifInfo    = 0x1
	niifWarning = 0x2

	notifyIconVersion4 = 4

	wmUser     = 0x0400
	wmApp      = 0x8000
	wmClose    = 0x0010
	wmDestroy  = 0x0002
	wmLButUp   = 0x0202
	ninSelect  = wmUser + 0
	ninKeySel  = wmUser + 1
	ninBHide   = wmUser + 3
	ninBTimout = wmUser + 4
	ninBClick  = wmUser + 5

	// wmBalloon is the notify icon's callback message; wmShow asks the
	// window's thread to show Balloons.req.
	wmBalloon = wmApp + 1
	wmShow    = wmApp + 2
	// balloonID is the notify icon's id on Balloons' own window.
	balloonID = 1
)

// notifyIconData is NOTIFYICONDATAW as Windows Vista and later know it.
type notifyIconData struct {
	Size            uint32
	Wnd             windows.Handle
	ID              uint32
	Flags           uint32
	CallbackMessage uint32
	Icon            windows.Handle
	Tip             [128]uint16
	State           uint32
	StateMask       uint32
	Info            [256]uint16
	Version         uint32 // union with uTimeout
	InfoTitle       [64]uint16
	InfoFlags       uint32
	GUIDItem        windows.GUID
	BalloonIcon     windows.Handle
}

type wndClassEx struct {
	Size       uint32
	Style      uint32
	WndProc    uintptr
	ClsExtra   int32
	WndExtra   int32
	Instance   windows.Handle
	Icon       windows.Handle
	Cursor     windows.Handle
	Background windows.Handle
	MenuName   *uint16
	ClassName  *uint16
	IconSm     windows.Handle
}

var (
	shell32                      = windows.NewLazySystemDLL("shell32.dll")
	procShellNotifyIconW         = shell32.NewProc("Shell_NotifyIconW")
	procRegisterClassExW         = user32.NewProc("RegisterClassExW")
	procUnregisterClassW         = user32.NewProc("UnregisterClassW")
	procCreateWindowExW          = user32.NewProc("CreateWindowExW")
	procDestroyWindow            = user32.NewProc("DestroyWindow")
	procDefWindowProcW           = user32.NewProc("DefWindowProcW")
	procPostMessageW             = user32.NewProc("PostMessageW")
	procSendMessageW             = user32.NewProc("SendMessageW")
	procPostQuitMessage          = user32.NewProc("PostQuitMessage")
	procCreateIconFromResourceEx = user32.NewProc("CreateIconFromResourceEx")
	procDestroyIcon              = user32.NewProc("DestroyIcon")
	kernel32                     = windows.NewLazySystemDLL("kernel32.dll")
	procGetModuleHandleW         = kernel32.NewProc("GetModuleHandleW")
)

// ErrNoNotificationArea is Show's error when Windows has no notification
// area to show a notification in (no interactive desktop; Wine without a
// display).
var ErrNoNotificationArea = errors.New("no notification area to show a notification in")

// NewBalloons creates Balloons' hidden window on a thread of its own.
// Close removes it.
func NewBalloons(onClick func(page string), log *slog.Logger) (*Balloons, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Balloons{onClick: onClick, log: log, icons: map[NoticeKind]windows.Handle{}, done: make(chan struct{}), shell: shellNotifyIcon}
	for kind, name := range map[NoticeKind]string{NoticePermit: assets.TrayPermitIcon, NoticeEStop: assets.TrayStoppedIcon, NoticeLowered: assets.TrayReadyIcon} {
		ico, err := assets.Icon(name)
		if err == nil {
			var h windows.Handle
			if h, err = iconFromICO(ico, 16); err == nil {
				b.icons[kind] = h
				continue
			}
		}
		b.destroyIcons()
		return nil, fmt.Errorf("notification icon %s: %w", name, err)
	}
	ready := make(chan error, 1)
	go b.loop(ready)
	if err := <-ready; err != nil {
		b.destroyIcons()
		return nil, err
	}
	return b, nil
}

// loop creates the window and runs its thread's message loop until the
// window is destroyed.
func (b *Balloons) loop(ready chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(b.done)
	hinst, _, _ := procGetModuleHandleW.Call(0)
	class, err := windows.UTF16PtrFromString(fmt.Sprintf("HearthNotifications%p", b))
	if err != nil {
		ready <- err
		return
	}
	wc := wndClassEx{WndProc: windows.NewCallback(b.wndProc), Instance: windows.Handle(hinst), ClassName: class}
	wc.Size = uint32(unsafe.Sizeof(wc))
	if r, _, err := procRegisterClassExW.Call(uintptr(unsafe.Pointer(&wc))); r == 0 {
		ready <- fmt.Errorf("register the notification window class: %w", err)
		return
	}
	defer procUnregisterClassW.Call(uintptr(unsafe.Pointer(class)), hinst)
	hwnd, _, err := procCreateWindowExW.Call(0, uintptr(unsafe.Pointer(class)), 0, 0, 0, 0, 0, 0, 0, 0, hinst, 0)
	if hwnd == 0 {
		ready <- fmt.Errorf("create the notification window: %w", err)
		return
	}
	b.class, b.hwnd = class, windows.Handle(hwnd)
	ready <- nil
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

func (b *Balloons) wndProc(hwnd windows.Handle, message uint32, wParam, lParam uintptr) uintptr {
	switch message {
	case wmBalloon:
		// NOTIFYICON_VERSION_4: the event is lParam's low word.
		switch uint32(lParam & 0xffff) {
		case ninBClick, ninSelect, ninKeySel, wmLButUp:
			b.clicked()
		case ninBTimout, ninBHide:
			b.remove()
		}
		return 0
	case wmShow:
		b.reqErr = b.showNow(b.req)
		return 0
	case wmClose:
		b.remove()
		procDestroyWindow.Call(uintptr(hwnd))
		return 0
	case wmDestroy:
		procPostQuitMessage.Call(0)
		return 0
	}
	r, _, _ := procDefWindowProcW.Call(uintptr(hwnd), uintptr(message), wParam, lParam)
	return r
}

// clicked opens the page of the notification shown, once.
func (b *Balloons) clicked() {
	page := b.page
	b.page = ""
	b.remove()
	if page != "" && b.onClick != nil {
		// Not on the window's thread: opening the browser takes a while.
		go b.onClick(page)
	}
}

func (b *Balloons) data() notifyIconData {
	var nid notifyIconData
	nid.Size = uint32(unsafe.Sizeof(nid))
	nid.Wnd, nid.ID = b.hwnd, balloonID
	return nid
}

// Show shows n as a Windows notification; a click on it opens n.Page.
func (b *Balloons) Show(n Notice) error {
	b.show.Lock()
	defer b.show.Unlock()
	if b.closed {
		return errors.New("show a notification: the notifications are closed")
	}
	b.req, b.reqErr = n, nil
	procSendMessageW.Call(uintptr(b.hwnd), wmShow, 0, 0)
	return b.reqErr
}

// showNow is Show on the window's thread.
func (b *Balloons) showNow(n Notice) error {
	nid := b.data()
	nid.Flags = nifMessage | nifIcon | nifTip | nifInfo
	nid.CallbackMessage = wmBalloon
	nid.Icon = b.icons[n.Kind]
	nid.InfoFlags = niifInfo
	if n.Kind == NoticeEStop || n.Kind == NoticeLowered {
		nid.InfoFlags = niifWarning
	}
	copyUTF16(nid.Tip[:], "Hearth: "+n.Title)
	copyUTF16(nid.InfoTitle[:], n.Title)
	copyUTF16(nid.Info[:], n.Text)
	if !b.added {
		if err := b.shell(nimAdd, &nid); err != nil {
			return fmt.Errorf("%w (Shell_NotifyIcon: %v)", ErrNoNotificationArea, err)
		}
		b.added = true
		ver := b.data()
		ver.Version = notifyIconVersion4
		if err := b.shell(nimSetVersion, &ver); err != nil {
			b.log.Warn("tray notifications: set the notify icon's version", "err", err)
		}
	} else if err := b.shell(nimModify, &nid); err != nil {
		return fmt.Errorf("show a notification: Shell_NotifyIcon: %w", err)
	}
	b.page = n.Page
	return nil
}

// remove takes Balloons' notify icon away, if it is there, and with it
// the notification (on the window's thread): a click can no longer come.
func (b *Balloons) remove() {
	b.page = ""
	if !b.added {
		return
	}
	nid := b.data()
	if err := b.shell(nimDelete, &nid); err != nil {
		b.log.Warn("tray notifications: remove the notify icon", "err", err)
	}
	b.added = false
}

// Close removes the notify icon and the window and waits for its thread.
func (b *Balloons) Close() error {
	b.show.Lock()
	if b.closed {
		b.show.Unlock()
		return nil
	}
	b.closed = true
	b.show.Unlock()
	r, _, err := procPostMessageW.Call(uintptr(b.hwnd), wmClose, 0, 0)
	if r == 0 {
		return fmt.Errorf("close the notification window: %w", err)
	}
	<-b.done
	b.destroyIcons()
	return nil
}

func (b *Balloons) destroyIcons() {
	for k, h := range b.icons {
		procDestroyIcon.Call(uintptr(h))
		delete(b.icons, k)
	}
}

// copyUTF16 copies s into dst as a NUL-terminated UTF-16 string, cut to
// fit.
func copyUTF16(dst []uint16, s string) {
	u := windows.StringToUTF16(s)
	if len(u) > len(dst) {
		u = append(u[:len(dst)-1], 0)
	}
	copy(dst, u)
}

// iconFromICO makes an icon handle from the image in an .ico file whose
// width is nearest to size: CreateIconFromResourceEx takes one image (a
// BMP or PNG), not the file with its directory.
func iconFromICO(ico []byte, size int) (windows.Handle, error) {
	if len(ico) < 6 || binary.LittleEndian.Uint16(ico[2:]) != 1 {
		return 0, errors.New("not an .ico file")
	}
	count := int(binary.LittleEndian.Uint16(ico[4:]))
	best, bestDiff := -1, 1<<30
	for i := range count {
		e := 6 + 16*i
		if e+16 > len(ico) {
			return 0, errors.New("truncated .ico directory")
		}
		w := int(ico[e])
		if w == 0 {
			w = 256
		}
		if d := abs(w - size); d < bestDiff {
			best, bestDiff = i, d
		}
	}
	if best < 0 {
		return 0, errors.New(".ico file without images")
	}
	e := 6 + 16*best
	n := int(binary.LittleEndian.Uint32(ico[e+8:]))
	off := int(binary.LittleEndian.Uint32(ico[e+12:]))
	if off < 0 || n <= 0 || off+n > len(ico) {
		return 0, errors.New(".ico image outside the file")
	}
	img := ico[off : off+n]
	const iconVersion = 0x00030000
	h, _, err := procCreateIconFromResourceEx.Call(uintptr(unsafe.Pointer(&img[0])), uintptr(n), 1, iconVersion, uintptr(size), uintptr(size), 0)
	if h == 0 {
		return 0, fmt.Errorf("CreateIconFromResourceEx: %w", err)
	}
	return windows.Handle(h), nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
