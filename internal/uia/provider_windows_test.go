package uia

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// These tests run the Windows provider for real (under Wine in CI, where
// UI Automation itself may not work): whatever the host offers, every
// call must answer completed or a clean refusal naming its reason, never
// hang, panic or send input.

func TestWindowsInputLayout(t *testing.T) {
	want := uintptr(28)
	if unsafe.Sizeof(uintptr(0)) == 8 {
		want = 40
	}
	if got := unsafe.Sizeof(mouseEvent{}); got != want {
		t.Fatalf("INPUT is %d bytes, Windows expects %d", got, want)
	}
}

func TestWindowsBSTRRoundTrip(t *testing.T) {
	for _, s := range []string{"", "Save as…", "a\x00b", strings.Repeat("ü", 300)} {
		b, err := newBSTR(s)
		if err != nil {
			t.Fatal(err)
		}
		got := bstr(b)
		if want, _, _ := strings.Cut(s, "\x00"); got != want {
			t.Errorf("BSTR round trip of %q: %q", s, got)
		}
	}
}

func TestWindowsElevation(t *testing.T) {
	p := &winProvider{}
	if el, err := p.Elevated(os.Getpid()); err != nil || el {
		t.Fatalf("Hearth itself is never more elevated than Hearth: %v %v", el, err)
	}
	if _, err := p.Elevated(0); err == nil {
		t.Fatal("process id 0 cannot be checked")
	}
	self, err := tokenElevated(windows.GetCurrentProcessToken())
	if err != nil {
		t.Fatal(err)
	}
	// The token reading itself, whatever Hearth's own elevation.
	if own, err := processElevated(os.Getpid()); err != nil || own != self {
		t.Fatalf("own process read through its pid: elevated=%v (token says %v) err=%v", own, self, err)
	}
	if _, err := processElevated(0x7ffffff0); err == nil {
		t.Fatal("a process that does not exist must be an error, not an answer")
	}
	el, err := p.Elevated(0x7ffffff0)
	t.Logf("Hearth elevated=%v; a missing process: elevated=%v err=%v", self, el, err)
	if el {
		t.Fatal("a process that does not exist must not count as elevated")
	}
}

func TestWindowsDesktopCheck(t *testing.T) {
	err := (&winProvider{}).InteractiveDesktop()
	t.Logf("interactive desktop: %v (nil means available)", err)
}

func TestWindowsProviderAnswersCleanly(t *testing.T) {
	s := &Service{Provider: DefaultProvider(), Deadline: 5 * time.Second}
	t.Cleanup(s.Close)
	avail := s.Available(t.Context())
	t.Logf("ui automation on this host (%s/%s): available=%v", runtime.GOOS, runtime.GOARCH, avail == nil)
	if avail != nil {
		t.Logf("reason: %v", avail)
		if !strings.HasPrefix(avail.Error(), Unavailable) {
			t.Fatalf("the reason must start with %q: %v", Unavailable, avail)
		}
	}
	res, err := s.Snapshot(t.Context(), Input{MaxDepth: num(2), MaxNodes: num(40)})
	switch {
	case err == nil:
		t.Logf("desktop snapshot: %d nodes, truncated_by %v, root %q (%s)", res.NodeCount, res.TruncatedBy, res.Roots[0].Name, res.Roots[0].ControlType)
	default:
		c := code(err)
		if c != "blocked/unavailable" && c != "blocked/no_interactive_desktop" && c != "failed/provider_failed" {
			t.Fatalf("snapshot: %v (%s)", err, c)
		}
		t.Logf("desktop snapshot refused cleanly: %s: %v", c, err)
	}
	if _, err := s.Snapshot(t.Context(), Input{HWND: 0x7ffffff0}); err == nil {
		t.Fatal("a window that does not exist cannot be walked")
	} else {
		t.Logf("missing hwnd: %s: %v", code(err), err)
	}
	// Fallback rules are decided before the provider is asked anything.
	_, err = s.Action(t.Context(), Input{Action: ActClick, AllowFallback: true, Target: &Target{Name: str("OK")}})
	if code(err) != "blocked/fallback_refused" {
		t.Fatalf("unscoped click: %v", err)
	}
}

// noWindows ends a test that could not create a window. A host without a
// display skips; under scripts/test-windows, whose Wine prefix uses Wine's
// null graphics driver (and which says so in HEARTH_WINE_WINDOWS), windows
// are expected to work, so a failure there fails instead of hiding the
// tests that need them.
func noWindows(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("HEARTH_WINE_WINDOWS") != "" {
		t.Fatalf("CreateWindowEx failed although the Wine prefix was set up with a graphics driver (HEARTH_WINE_WINDOWS=%s): %v", os.Getenv("HEARTH_WINE_WINDOWS"), err)
	}
	t.Skipf("no window can be created here (no display; under Wine: no graphics driver, see scripts/lib/wine.sh): %v", err)
}

// TestWindowsFallbackPlumbing exercises what fallback input uses around UI
// Automation — foreground, hit testing and SendInput with Windows' INPUT
// layout — on a window of its own. It needs a display (under Wine: a
// graphics driver, which may be the null one), and skips without one.
func TestWindowsFallbackPlumbing(t *testing.T) {
	createWindow := moduser32.NewProc("CreateWindowExW")
	destroyWindow := moduser32.NewProc("DestroyWindow")
	getWindowRect := moduser32.NewProc("GetWindowRect")
	class, _ := windows.UTF16PtrFromString("STATIC")
	title, _ := windows.UTF16PtrFromString("hearth uia test")
	// SS_NOTIFY: without it a static control answers WM_NCHITTEST with
	// HTTRANSPARENT, and WindowFromPoint passes over such windows of its
	// own thread to whatever lies beneath (here: the desktop), on Windows
	// as under Wine.
	const wsVisible, wsCaption, ssNotify = 0x10000000, 0x00C00000, 0x0100
	// Windows belong to the thread that created them, and WM_NCHITTEST
	// reaches this one only on that thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, _, err := createWindow.Call(0, uintptr(unsafe.Pointer(class)), uintptr(unsafe.Pointer(title)), wsVisible|wsCaption|ssNotify, 40, 40, 240, 120, 0, 0, 0, 0)
	if h == 0 {
		noWindows(t, err)
	}
	defer destroyWindow.Call(h)
	hwnd := windows.HWND(h)
	p := &winProvider{}
	if err := p.foreground(hwnd); err != nil {
		t.Fatalf("bring the test window to the front: %v", err)
	}
	var rc rect
	if r, _, err := getWindowRect.Call(h, uintptr(unsafe.Pointer(&rc))); r == 0 || rc.right <= rc.left || rc.bottom <= rc.top {
		t.Fatalf("GetWindowRect(%#x) = %+v: %v", h, rc, err)
	}
	x, y := rc.left+(rc.right-rc.left)/2, rc.top+(rc.bottom-rc.top)/2
	if hit := windowFromPoint(x, y); !within(hit, hwnd) || ancestor(hit) != hwnd {
		t.Fatalf("hit test at (%d, %d) found %#x, not the window %#x", x, y, hit, h)
	}
	// A point beside the window hits something else (the desktop, or
	// whatever window lies there), never the window.
	if hit := windowFromPoint(rc.right+20, y); hit == 0 || within(hit, hwnd) {
		t.Fatalf("hit test at (%d, %d), beside the window %+v, found %#x", rc.right+20, y, rc, hit)
	}
	if within(hwnd, windows.HWND(0x7ffffff0)) {
		t.Fatal("within must not match an unrelated handle")
	}
	const vkShift = 0x10
	if err := sendInput([]keyEvent{
		{typ: inputKeyboard, ki: keybdInput{vk: vkShift}},
		{typ: inputKeyboard, ki: keybdInput{vk: vkShift, flags: keyUp}},
	}); err != nil {
		t.Fatalf("SendInput rejected the keyboard INPUT layout: %v", err)
	}
	const mouseMove = 0x0001
	if err := sendInput([]mouseEvent{{typ: inputMouse, mi: mouseInput{flags: mouseMove}}}); err != nil {
		t.Fatalf("SendInput rejected the mouse INPUT layout: %v", err)
	}
}

// TestWindowsOperatorSurfaceChildWindow: a real top-level window titled
// as the control panel, and a WS_CHILD window inside it. The child's own
// title says nothing; its top-level window (GetAncestor(GA_ROOT)) does,
// and the check refuses the child. It needs only user32 (which works under
// Wine, where UI Automation does not).
func TestWindowsOperatorSurfaceChildWindow(t *testing.T) {
	createWindow := moduser32.NewProc("CreateWindowExW")
	destroyWindow := moduser32.NewProc("DestroyWindow")
	class, _ := windows.UTF16PtrFromString("STATIC")
	create := func(title string, style, parent uintptr) uintptr {
		t.Helper()
		name, _ := windows.UTF16PtrFromString(title)
		h, _, err := createWindow.Call(0, uintptr(unsafe.Pointer(class)), uintptr(unsafe.Pointer(name)), style, 0, 0, 200, 100, parent, 0, 0, 0)
		if h == 0 {
			noWindows(t, err)
		}
		t.Cleanup(func() { destroyWindow.Call(h) })
		return h
	}
	const wsChild, wsOverlapped = 0x40000000, 0
	// Windows belong to the thread that created them; keep this one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	top := create("Permits · "+PanelTitle+" - Browser", wsOverlapped, 0)
	child := create("Chrome Legacy Window", wsChild, top)
	inner := create("", wsChild, child)

	p := &winProvider{}
	for _, h := range []uintptr{child, inner} {
		w, err := p.TopLevel(uint64(h))
		if err != nil {
			t.Fatalf("TopLevel(%#x): %v", h, err)
		}
		if w.HWND != uint64(top) || !strings.Contains(w.Title, PanelTitle) || w.ProcessID != os.Getpid() {
			t.Fatalf("TopLevel(%#x) = %+v; want hwnd %#x titled as the panel, pid %d", h, w, top, os.Getpid())
		}
		err = (&Service{}).checkWindow(p, "n1", uint64(h))
		if code(err) != "blocked/operator_surface" || !strings.Contains(err.Error(), "control panel") {
			t.Fatalf("child window %#x of the panel: %v (%s)", h, err, code(err))
		}
	}

	// A window of Hearth's own process under an ordinary title is refused
	// as Hearth's own UI.
	plain := create("Untitled - Notepad", wsOverlapped, 0)
	plainChild := create("", wsChild, plain)
	if err := (&Service{}).checkWindow(p, "n1", uint64(plainChild)); code(err) != "blocked/operator_surface" || !strings.Contains(err.Error(), "Hearth itself") {
		t.Fatalf("child of Hearth's own window: %v (%s)", err, code(err))
	}

	// A handle that is no window is reported as gone, not as safe.
	if _, err := p.TopLevel(0x7ffffff0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("TopLevel of no window: %v", err)
	}
	if err := (&Service{}).checkWindow(p, "n1", 0x7ffffff0); code(err) != "conflict/element_gone" {
		t.Fatalf("check of no window: %v (%s)", err, code(err))
	}

	// The desktop window is its own root and belongs to another process.
	desk := windows.GetDesktopWindow()
	w, err := p.TopLevel(uint64(desk))
	if err != nil && underWine() {
		// Wine's desktop window belongs to its explorer process, which
		// under the null graphics driver is not always there to own it.
		t.Logf("TopLevel(desktop) under Wine: %v", err)
		return
	}
	if err != nil {
		t.Fatalf("TopLevel(desktop): %v", err)
	}
	t.Logf("desktop window: %+v", w)
	if w.ProcessID != os.Getpid() {
		if err := (&Service{}).checkWindow(p, "n1", uint64(desk)); err != nil {
			t.Fatalf("the desktop is no operator surface: %v", err)
		}
	}
}

// underWine reports whether this Windows is Wine (its ntdll exports
// wine_get_version).
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
