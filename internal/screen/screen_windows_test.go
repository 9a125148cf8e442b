package screen_test

import (
	"context"
	"fmt"
	"image"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/screen"
)

var (
	user32               = windows.NewLazySystemDLL("user32.dll")
	gdi32                = windows.NewLazySystemDLL("gdi32.dll")
	procRegisterClassExW = user32.NewProc("RegisterClassExW")
	procCreateWindowExW  = user32.NewProc("CreateWindowExW")
	procDestroyWindow    = user32.NewProc("DestroyWindow")
	procDefWindowProcW   = user32.NewProc("DefWindowProcW")
	procShowWindow       = user32.NewProc("ShowWindow")
	procUpdateWindow     = user32.NewProc("UpdateWindow")
	procPeekMessageW     = user32.NewProc("PeekMessageW")
	procTranslateMessage = user32.NewProc("TranslateMessage")
	procDispatchMessageW = user32.NewProc("DispatchMessageW")
	procGetWindowRect    = user32.NewProc("GetWindowRect")
	procCreateSolidBrush = gdi32.NewProc("CreateSolidBrush")
)

type wndClassEx struct {
	Size, Style                        uint32
	WndProc                            uintptr
	ClsExtra, WndExtra                 int32
	Instance, Icon, Cursor, Background uintptr
	MenuName, ClassName                *uint16
	IconSm                             uintptr
}

type msg struct {
	HWND           uintptr
	Message        uint32
	WParam, LParam uintptr
	Time           uint32
	X, Y           int32
	Private        uint32
}

// pump dispatches the thread's pending messages for d (painting the
// window's background).
func pump(d time.Duration) {
	var m msg
	for end := time.Now().Add(d); time.Now().Before(end); {
		if r, _, _ := procPeekMessageW.Call(uintptr(unsafe.Pointer(&m)), 0, 0, 0, 1); r != 0 {
			procTranslateMessage.Call(uintptr(unsafe.Pointer(&m)))
			procDispatchMessageW.Call(uintptr(unsafe.Pointer(&m)))
			continue
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// openWindow shows a top-level window filled with rgb (0xRRGGBB) through
// its class's background brush and DefWindowProc.
func openWindow(t *testing.T, title string, rgb uint32) (windows.HWND, screen.Rect) {
	t.Helper()
	bgr := rgb>>16&0xff | rgb&0xff00 | (rgb&0xff)<<16
	brush, _, err := procCreateSolidBrush.Call(uintptr(bgr))
	if brush == 0 {
		t.Fatalf("CreateSolidBrush: %v", err)
	}
	name, _ := windows.UTF16PtrFromString("HearthScreenTest" + strings.ReplaceAll(title, " ", ""))
	wc := wndClassEx{WndProc: procDefWindowProcW.Addr(), Background: brush, ClassName: name}
	wc.Size = uint32(unsafe.Sizeof(wc))
	if r, _, err := procRegisterClassExW.Call(uintptr(unsafe.Pointer(&wc))); r == 0 && err != windows.ERROR_CLASS_ALREADY_EXISTS {
		t.Fatalf("RegisterClassEx: %v", err)
	}
	tp, _ := windows.UTF16PtrFromString(title)
	const wsPopup, wsVisible = 0x80000000, 0x10000000
	h, _, err := procCreateWindowExW.Call(0x8 /* WS_EX_TOPMOST */, uintptr(unsafe.Pointer(name)), uintptr(unsafe.Pointer(tp)), wsPopup|wsVisible,
		40, 50, 160, 90, 0, 0, 0, 0)
	if h == 0 {
		t.Fatalf("CreateWindowEx: %v", err)
	}
	t.Cleanup(func() { procDestroyWindow.Call(h) })
	procShowWindow.Call(h, 5)
	procUpdateWindow.Call(h)
	pump(300 * time.Millisecond)
	var r struct{ L, T, R, B int32 }
	procGetWindowRect.Call(h, uintptr(unsafe.Pointer(&r)))
	return windows.HWND(h), screen.Rect{X: int(r.L), Y: int(r.T), W: int(r.R - r.L), H: int(r.B - r.T)}
}

// TestWindowsClipboardRoundTrip sets CF_UNICODETEXT and reads it back
// through user32, and enforces the read bound.
func TestWindowsClipboardRoundTrip(t *testing.T) {
	s := &screen.Service{}
	defer s.Close()
	ctx := context.Background()
	text := "Hearth ✓ " + strings.Repeat("日本語 ", 1000)
	if _, err := s.ClipboardSet(ctx, text); err != nil {
		t.Fatal(err)
	}
	got, err := s.ClipboardGet(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != text {
		t.Fatalf("read back %d bytes %.40q, set %d", len(got.Text), got.Text, len(text))
	}
	if _, err := s.ClipboardGet(ctx, 64); errCode(err) != "too_large" {
		t.Fatalf("max_bytes 64: %v", err)
	}
}

// TestWindowsScreenshot captures a window of this process (counted as
// another program's: Self is another pid) by its handle: the bounds are
// the window's, the image its size and its pixels the window's color. The
// same window is refused when it is Hearth's own, and blacked out of a
// monitor capture. Under Wine's null graphics driver (HEARTH_WINE_WINDOWS
// =null) windows are listed and refused but the screen has no pixels:
// BitBlt must then fail, and the selftest's screen.screenshot check covers
// the capture on real Windows.
func TestWindowsScreenshot(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const red = 0xdd2211
	h, bounds := openWindow(t, "screen test", red)
	ctx := context.Background()
	own := &screen.Service{}
	defer own.Close()
	for _, in := range []screen.ShotInput{{HWND: uint64(h)}, {ProcessID: int(windows.GetCurrentProcessId())}} {
		if _, err := own.Screenshot(ctx, in); errCode(err) != "operator_surface" {
			t.Fatalf("Hearth's own window (%+v): %v", in, err)
		}
	}
	s := &screen.Service{Self: 1}
	defer s.Close()
	shot, err := s.Screenshot(ctx, screen.ShotInput{HWND: uint64(h)})
	if os.Getenv("HEARTH_WINE_WINDOWS") == "null" {
		if errCode(err) != "capture_failed" || !strings.Contains(err.Error(), "BitBlt") || !strings.Contains(err.Error(), fmt.Sprint(bounds)) {
			t.Fatalf("under the null driver: %v, want BitBlt of the window's bounds %v to fail", err, bounds)
		}
		t.Skipf("Wine's null graphics driver has no screen pixels (%v); listing and refusing windows worked", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if shot.Bounds != bounds || shot.Title != "screen test" || shot.ProcessID != int(windows.GetCurrentProcessId()) {
		t.Fatalf("shot of %v %q process %d, window at %v", shot.Bounds, shot.Title, shot.ProcessID, bounds)
	}
	img := decodeShot(t, shot)
	if img.Bounds() != image.Rect(0, 0, bounds.W, bounds.H) {
		t.Fatalf("image %v for window %v", img.Bounds(), bounds)
	}
	if c := img.At(bounds.W/2, bounds.H/2); !near(c, red) {
		t.Errorf("center pixel %v, want the window's red", c)
	}
	mon, err := own.Screenshot(ctx, screen.ShotInput{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range mon.BlackedOut {
		found = found || r == bounds
	}
	if !found {
		t.Fatalf("monitor capture blacked out %v, not the window at %v", mon.BlackedOut, bounds)
	}
	if c := decodeShot(t, mon).At(bounds.X-mon.Bounds.X+5, bounds.Y-mon.Bounds.Y+5); !near(c, 0) {
		t.Errorf("Hearth's window shows %v in the monitor capture, want black", c)
	}
}

// TestInputDesktopIsThePersonsHere: on the desktop the tests run on (Wine's
// or a PC's, nobody's UAC prompt up), the real OpenInputDesktop probe says
// input may go: a wrong refusal here would block every click Hearth sends.
func TestInputDesktopIsThePersonsHere(t *testing.T) {
	if err := screen.InputDesktop(); err != nil {
		t.Fatalf("the input desktop check refuses input on the test's own desktop: %v", err)
	}
}
