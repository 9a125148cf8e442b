package desktop_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"

	"github.com/hearth-dev/hearth/internal/desktop"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/proc"
)

// fixtureEnv names the window title a re-executed test binary shows as
// the fixture app: a window of another process, as a person's app is
// (Hearth's own windows are refused).
const fixtureEnv = "HEARTH_DESKTOP_FIXTURE_TITLE"

func TestMain(m *testing.M) {
	if title := os.Getenv(fixtureEnv); title != "" {
		os.Exit(fixtureWindow(title))
	}
	// The fake document handler: the command registered for the test's
	// own file type, run by ShellExecuteEx as "<this> fake-open-handler
	// LOG DOCUMENT"; it writes the document's path to LOG.
	if len(os.Args) == 4 && os.Args[1] == "fake-open-handler" {
		if err := os.WriteFile(os.Args[2], []byte(os.Args[3]), 0o600); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var (
	user32               = windows.NewLazySystemDLL("user32.dll")
	procRegisterClassExW = user32.NewProc("RegisterClassExW")
	procCreateWindowExW  = user32.NewProc("CreateWindowExW")
	procDefWindowProcW   = user32.NewProc("DefWindowProcW")
	procPeekMessageW     = user32.NewProc("PeekMessageW")
	procTranslateMessage = user32.NewProc("TranslateMessage")
	procDispatchMessageW = user32.NewProc("DispatchMessageW")
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

// fixtureWindow shows an ordinary overlapped window titled title and
// pumps its messages until it is destroyed (DefWindowProc destroys it on
// WM_CLOSE) or a minute passes.
func fixtureWindow(title string) int {
	runtime.LockOSThread()
	name, _ := windows.UTF16PtrFromString("HearthDesktopFixture")
	wc := wndClassEx{WndProc: procDefWindowProcW.Addr(), ClassName: name, Background: 6}
	wc.Size = uint32(unsafe.Sizeof(wc))
	procRegisterClassExW.Call(uintptr(unsafe.Pointer(&wc)))
	tp, _ := windows.UTF16PtrFromString(title)
	const wsOverlappedWindow, wsVisible = 0x00CF0000, 0x10000000
	h, _, _ := procCreateWindowExW.Call(0, uintptr(unsafe.Pointer(name)), uintptr(unsafe.Pointer(tp)), wsOverlappedWindow|wsVisible,
		40, 50, 300, 200, 0, 0, 0, 0)
	if h == 0 {
		return 3
	}
	var m msg
	for end := time.Now().Add(time.Minute); time.Now().Before(end) && windows.IsWindow(windows.HWND(h)); {
		if r, _, _ := procPeekMessageW.Call(uintptr(unsafe.Pointer(&m)), 0, 0, 0, 1); r != 0 {
			procTranslateMessage.Call(uintptr(unsafe.Pointer(&m)))
			procDispatchMessageW.Call(uintptr(unsafe.Pointer(&m)))
			continue
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ip(v int) *int { return &v }

func newService(t *testing.T, root string) *desktop.Service {
	roots, err := fsops.NewRoots([]string{root}, nil)
	must(t, err)
	s, err := desktop.New(roots, func(string) bool { return false }, proc.NewStarted(), slog.New(slog.DiscardHandler))
	must(t, err)
	return s
}

// find returns the listed window titled title, nil while none is (or
// while the desktop has no window at all: Wine's, before the fixture's).
func find(t *testing.T, s *desktop.Service, title string) *desktop.WindowInfo {
	t.Helper()
	l, err := s.Windows(context.Background(), desktop.WindowsInput{})
	if err != nil {
		return nil
	}
	for i := range l.Windows {
		if l.Windows[i].Title == title {
			return &l.Windows[i]
		}
	}
	return nil
}

// TestWindowListMoveCloseOnTheFixture: a window of another process (the
// fixture) is listed with its process, app, bounds and state; ui.window
// moves it (to a negative x, as on a monitor left of the primary),
// resizes, minimizes and restores it, and closes it: the window goes and
// its process ends.
func TestWindowListMoveCloseOnTheFixture(t *testing.T) {
	title := "Hearth desktop fixture – Zoë"
	self, err := os.Executable()
	must(t, err)
	child := exec.Command(self, "-test.run=^$")
	child.Env = append(os.Environ(), fixtureEnv+"="+title)
	must(t, child.Start())
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	t.Cleanup(func() { child.Process.Kill() })
	s := newService(t, t.TempDir())
	ctx := context.Background()

	var w *desktop.WindowInfo
	for end := time.Now().Add(20 * time.Second); w == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the fixture's window was never listed")
		}
		w = find(t, s, title)
	}
	wantApp := strings.ToLower(filepath.Base(self))
	if w.ProcessID != child.Process.Pid || w.App != wantApp || w.Minimized || w.Bounds.W != 300 || w.Bounds.H != 200 {
		t.Errorf("listed %+v; want process %d, app %s, 300×200, not minimized", *w, child.Process.Pid, wantApp)
	}
	done, err := s.Window(ctx, desktop.WindowInput{HWND: w.HWND, Action: "move", X: ip(-120), Y: ip(30)})
	must(t, err)
	if done.Window == nil || done.Window.Bounds.X != -120 || done.Window.Bounds.Y != 30 {
		t.Errorf("after move: %+v", done.Window)
	}
	done, err = s.Window(ctx, desktop.WindowInput{HWND: w.HWND, Action: "resize", W: ip(420), H: ip(260)})
	must(t, err)
	if done.Window == nil || done.Window.Bounds.W != 420 || done.Window.Bounds.H != 260 || done.Window.Bounds.X != -120 {
		t.Errorf("after resize: %+v", done.Window)
	}
	done, err = s.Window(ctx, desktop.WindowInput{HWND: w.HWND, Action: "minimize"})
	must(t, err)
	if done.Window == nil || !done.Window.Minimized {
		t.Errorf("after minimize: %+v", done.Window)
	}
	done, err = s.Window(ctx, desktop.WindowInput{HWND: w.HWND, Action: "restore"})
	must(t, err)
	if done.Window == nil || done.Window.Minimized {
		t.Errorf("after restore: %+v", done.Window)
	}
	done, err = s.Window(ctx, desktop.WindowInput{HWND: w.HWND, Action: "close"})
	must(t, err)
	if !done.Closed {
		t.Errorf("close: the window did not go")
	}
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the fixture did not end after its window closed")
	}
}

// TestOpenDocumentWithShellExecuteEx: ui.open of a document under the
// root (a name with accents and spaces) goes through ShellExecuteEx to the
// app registered for its type — here the fake handler, registered for
// the test's own extension in the machine's classes (Wine 8 does not
// merge the user's into HKEY_CLASSES_ROOT; Wine runs as administrator)
// — which receives the document's path as one argument.
func TestOpenDocumentWithShellExecuteEx(t *testing.T) {
	self, err := os.Executable()
	must(t, err)
	root := t.TempDir()
	logFile := filepath.Join(root, "handler.log")
	doc := filepath.Join(root, "Zoë Ünal budget.hearthdoc")
	must(t, os.WriteFile(doc, []byte("rent 900\r\n"), 0o600))
	const ext, class = `Software\Classes\.hearthdoc`, `Software\Classes\HearthDesktopTestDoc`
	k, _, err := registry.CreateKey(registry.LOCAL_MACHINE, ext, registry.SET_VALUE)
	must(t, err)
	must(t, k.SetStringValue("", "HearthDesktopTestDoc"))
	k.Close()
	k, _, err = registry.CreateKey(registry.LOCAL_MACHINE, class+`\shell\open\command`, registry.SET_VALUE)
	must(t, err)
	must(t, k.SetStringValue("", `"`+self+`" fake-open-handler "`+logFile+`" "%1"`))
	k.Close()
	t.Cleanup(func() {
		for _, key := range []string{class + `\shell\open\command`, class + `\shell\open`, class + `\shell`, class, ext} {
			registry.DeleteKey(registry.LOCAL_MACHINE, key)
		}
	})

	s := newService(t, root)
	out, err := s.Open(context.Background(), desktop.OpenInput{Path: doc})
	must(t, err)
	if out.Opened != "path" || out.Path != doc {
		t.Errorf("opened %+v", out)
	}
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(logFile)
		if err == nil && len(b) > 0 {
			if !strings.EqualFold(string(b), doc) {
				t.Fatalf("the handler received %q, want %q", b, doc)
			}
			break
		}
		if time.Now().After(end) {
			t.Fatal("the registered handler never received the document")
		}
	}
	if _, err := s.Open(context.Background(), desktop.OpenInput{URL: "ms-settings:privacy"}); err == nil {
		t.Error("ms-settings: opened")
	}
}
