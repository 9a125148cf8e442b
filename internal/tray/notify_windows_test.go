package tray

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/assets"
)

// TestBalloons creates the notifications' real window and, where Windows
// has a notification area, shows a notification on it. Under Wine without
// a display (scripts/test-windows) Show must say there is no notification
// area; the rest — the window, its thread, the routing of the shell's
// callback messages to a click that opens the notice's page, and Close —
// runs everywhere, with the shell's messages sent as the shell sends them.
func TestBalloons(t *testing.T) {
	clicks := make(chan string, 4)
	b, err := NewBalloons(func(page string) { clicks <- page }, nil)
	if err != nil {
		if os.Getenv("HEARTH_WINE_WINDOWS") != "" {
			t.Fatalf("NewBalloons failed although the Wine prefix has a graphics driver: %v", err)
		}
		t.Fatal(err)
	}
	permit := Notice{Kind: NoticePermit, Title: "ChatGPT is waiting for your permission", Text: "ChatGPT wants to run dir. Click to decide.", Page: "/permits"}
	err = b.Show(permit)
	var shell *fakeShell
	switch {
	case errors.Is(err, ErrNoNotificationArea):
		t.Logf("no notification area here (%v): a fake shell stands in for Shell_NotifyIcon, and the test sends the shell's messages", err)
		shell = &fakeShell{}
		b.show.Lock()
		b.shell = shell.call
		b.show.Unlock()
		if err := b.Show(permit); err != nil {
			t.Fatal(err)
		}
		if got := shell.lastOf(nimAdd); got.msg != nimAdd || got.info != permit.Text || got.title != permit.Title || got.flags&nifInfo == 0 || got.icon == 0 {
			t.Fatalf("Shell_NotifyIcon got %+v", got)
		}
	case err != nil:
		t.Fatal(err)
	}

	// The user clicks the notification: its page opens, once.
	b.sendForTest(wmBalloon, 0, ninBClick|balloonID<<16)
	if got := waitClick(t, clicks); got != "/permits" {
		t.Fatalf("click opened %q, want /permits", got)
	}
	if shell != nil && shell.last().msg != nimDelete {
		t.Fatalf("the notify icon stayed after the click: last call %+v", shell.last())
	}
	b.sendForTest(wmBalloon, 0, ninBClick|balloonID<<16)
	select {
	case p := <-clicks:
		t.Fatalf("a second click on a notification already handled opened %q", p)
	case <-time.After(200 * time.Millisecond):
	}

	// The e-stop notification times out: nothing opens; a click on the
	// (removed) icon afterwards does nothing either.
	estop := Notice{Kind: NoticeEStop, Title: "Emergency stop is on", Text: "Reason: test.", Page: "/safety"}
	if err := b.Show(estop); err != nil {
		t.Fatal(err)
	}
	if shell != nil && shell.calls() != 5 {
		t.Fatalf("Shell_NotifyIcon calls: %d, want add, version, delete, add, version", shell.calls())
	}
	b.sendForTest(wmBalloon, 0, ninBTimout|balloonID<<16)
	if shell != nil && shell.last().msg != nimDelete {
		t.Fatalf("a timed-out notification kept its icon: %+v", shell.last())
	}
	b.sendForTest(wmBalloon, 0, ninSelect|balloonID<<16)
	select {
	case p := <-clicks:
		t.Fatalf("a click after the time-out opened %q", p)
	case <-time.After(200 * time.Millisecond):
	}
	// A click on the icon itself (NIN_SELECT) opens the page too.
	if err := b.Show(estop); err != nil {
		t.Fatal(err)
	}
	b.sendForTest(wmBalloon, 0, ninSelect|balloonID<<16)
	if got := waitClick(t, clicks); got != "/safety" {
		t.Fatalf("icon click opened %q, want /safety", got)
	}

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Show(permit); err == nil {
		t.Fatal("Show after Close must fail")
	}
	if err := b.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	// The window class went with the window: a new Balloons works.
	b2, err := NewBalloons(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b2.Close()
}

// fakeShell is a FAKE Shell_NotifyIcon for a Windows without a
// notification area: it records each call and succeeds.
type fakeShell struct {
	mu  sync.Mutex
	log []shellCall
}

type shellCall struct {
	msg         uintptr
	flags       uint32
	title, info string
	icon        windows.Handle
}

func (f *fakeShell) call(msg uintptr, nid *notifyIconData) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, shellCall{msg: msg, flags: nid.Flags, title: windows.UTF16ToString(nid.InfoTitle[:]), info: windows.UTF16ToString(nid.Info[:]), icon: nid.Icon})
	return nil
}

func (f *fakeShell) last() shellCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.log[len(f.log)-1]
}

// lastOf is the last call with msg (the zero call if none).
func (f *fakeShell) lastOf(msg uintptr) shellCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.log) - 1; i >= 0; i-- {
		if f.log[i].msg == msg {
			return f.log[i]
		}
	}
	return shellCall{}
}

func (f *fakeShell) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.log)
}

// sendForTest delivers message to the window as the shell does.
func (b *Balloons) sendForTest(message uint32, wParam, lParam uintptr) {
	procSendMessageW.Call(uintptr(b.hwnd), uintptr(message), wParam, lParam)
}

func waitClick(t *testing.T, clicks <-chan string) string {
	t.Helper()
	select {
	case p := <-clicks:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("the click opened nothing")
		return ""
	}
}

func TestIconFromICO(t *testing.T) {
	ico, err := assets.Icon(assets.TrayPermitIcon)
	if err != nil {
		t.Fatal(err)
	}
	h, err := iconFromICO(ico, 16)
	if err != nil || h == 0 {
		t.Fatalf("icon from %s: %v", assets.TrayPermitIcon, err)
	}
	procDestroyIcon.Call(uintptr(h))
	for _, bad := range [][]byte{nil, []byte("not an icon"), {0, 0, 1, 0, 1, 0}} {
		if _, err := iconFromICO(bad, 16); err == nil {
			t.Errorf("iconFromICO(%q) must fail", bad)
		}
	}
}
