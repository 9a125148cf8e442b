package tray

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// OpenURL opens a loopback http URL (the control panel) in the user's
// default browser, through ShellExecuteEx's "open" verb.
func OpenURL(raw string) error {
	if err := checkBrowsable(raw); err != nil {
		return err
	}
	if err := shellOpen(raw); err != nil {
		// The URL carries a one-time login token: name only its address.
		shown := raw
		if i := strings.IndexByte(shown, '?'); i >= 0 {
			shown = shown[:i]
		}
		return fmt.Errorf("open %s in the browser: %w", shown, err)
	}
	return nil
}

var procShellExecuteExW = windows.NewLazySystemDLL("shell32.dll").NewProc("ShellExecuteExW")

// SHELLEXECUTEINFOW fMask flags (shellapi.h).
const (
	// seeMaskNoAsync makes ShellExecuteEx finish its work before it
	// returns. Microsoft requires it when the calling thread has no
	// message loop or ends soon after the call — both true of onSTA's
	// thread — since the shell may otherwise hand the work to that
	// thread's message loop, or to work that dies with the thread.
	seeMaskNoAsync = 0x00000100
	// seeMaskFlagNoUI keeps the shell from showing an error dialog of its
	// own (a missing browser, say); the failure comes back as an error.
	seeMaskFlagNoUI = 0x00000400
)

// shellExecuteInfo is SHELLEXECUTEINFOW. Go's natural alignment gives
// the C layout on both 64-bit (112 bytes) and 32-bit (60) Windows.
type shellExecuteInfo struct {
	cbSize       uint32
	fMask        uint32
	hwnd         windows.HWND
	lpVerb       *uint16
	lpFile       *uint16
	lpParameters *uint16
	lpDirectory  *uint16
	nShow        int32
	hInstApp     windows.Handle
	lpIDList     uintptr
	lpClass      *uint16
	hkeyClass    windows.Handle
	dwHotKey     uint32
	hIconOrMon   windows.Handle
	hProcess     windows.Handle
}

// openInfo is the request shellOpen hands to ShellExecuteEx: verb on
// file, shown normally, synchronously and without shell dialogs.
func openInfo(verb, file *uint16) *shellExecuteInfo {
	info := &shellExecuteInfo{
		fMask:  seeMaskNoAsync | seeMaskFlagNoUI,
		lpVerb: verb,
		lpFile: file,
		nShow:  windows.SW_SHOWNORMAL,
	}
	info.cbSize = uint32(unsafe.Sizeof(*info))
	return info
}

// shellOpen is ShellExecuteEx of the "open" verb on target, on a COM
// single-threaded apartment of its own (see onSTA).
func shellOpen(target string) error {
	verb, err := windows.UTF16PtrFromString("open")
	if err != nil {
		return err
	}
	file, err := windows.UTF16PtrFromString(target)
	if err != nil {
		return err
	}
	info := openInfo(verb, file)
	return onSTA(func() error {
		ok, _, callErr := procShellExecuteExW.Call(uintptr(unsafe.Pointer(info)))
		if ok != 0 {
			return nil
		}
		if errno, isErrno := callErr.(syscall.Errno); isErrno && errno != 0 {
			return fmt.Errorf("ShellExecuteEx: %w", errno)
		}
		// No last error: hInstApp holds the shell's own SE_ERR_ code.
		return fmt.Errorf("ShellExecuteEx failed (shell error %d)", info.hInstApp)
	})
}

// sFalse is the HRESULT CoInitializeEx returns when the thread already is
// in the requested apartment; it still needs its CoUninitialize.
const sFalse = syscall.Errno(1)

// onSTA runs fn on an OS thread initialized as a COM single-threaded
// apartment with OLE1 DDE disabled, as Microsoft requires of a thread
// that calls ShellExecuteEx: the shell may hand the verb to COM handlers and
// extensions, which misbehave, or fail, on an uninitialized or
// multithreaded thread. The caller's own thread cannot be used — it may
// be unlocked (any thread, any COM state) or already in another apartment
// (the tray's thread) — so fn runs on a goroutine locked to its thread.
// That goroutine ends still locked: Go then ends the OS thread instead of
// returning it to the pool, so neither the apartment nor anything the
// shell left on the thread outlives the call.
func onSTA(fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// Deliberately never unlocked (see above).
		err := windows.CoInitializeEx(0, windows.COINIT_APARTMENTTHREADED|windows.COINIT_DISABLE_OLE1DDE)
		if err != nil && !errors.Is(err, sFalse) {
			done <- fmt.Errorf("initialize COM (apartment-threaded) for the shell: %w", err)
			return
		}
		defer windows.CoUninitialize()
		done <- fn()
	}()
	return <-done
}
