package tray

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// OpenURL opens a loopback http URL (the control panel) in the user's
// default browser, through ShellExecute's "open" verb.
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

// shellOpen is ShellExecute(NULL, "open", target, …) on a COM
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
	return onSTA(func() error {
		return windows.ShellExecute(0, verb, file, nil, nil, windows.SW_SHOWNORMAL)
	})
}

// sFalse is the HRESULT CoInitializeEx returns when the thread already is
// in the requested apartment; it still needs its CoUninitialize.
const sFalse = syscall.Errno(1)

// onSTA runs fn on an OS thread initialized as a COM single-threaded
// apartment with OLE1 DDE disabled, as Microsoft requires of a thread
// that calls ShellExecute: the shell may hand the verb to COM handlers and
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
