package winconsole

import (
	"os"

	"golang.org/x/sys/windows"
)

// attachParentProcess is ATTACH_PARENT_PROCESS, (DWORD)-1.
const attachParentProcess = ^uint32(0)

// AttachParent attaches the process to its parent's console when it has
// none of its own (a GUI-subsystem exe started from a terminal), then binds
// every standard handle that is missing — not one redirected to a file or
// pipe — to the console: os.Stdin to CONIN$, os.Stdout and os.Stderr to
// CONOUT$, and the process's standard handles likewise, so child processes
// inherit them.
//
// It reports whether the process is now attached to a console: true if it
// already had one or joined its parent's, false when there is none to join
// (double-click, Task Scheduler), in which case nothing changes.
func AttachParent() (attached bool) {
	if !hasConsole() {
		attach := windows.NewLazySystemDLL("kernel32.dll").NewProc("AttachConsole")
		if attach.Find() != nil {
			return false
		}
		if r, _, _ := attach.Call(uintptr(attachParentProcess)); r == 0 || !hasConsole() {
			return false
		}
	}
	rebind(windows.STD_INPUT_HANDLE, "CONIN$", windows.GENERIC_READ|windows.GENERIC_WRITE, &os.Stdin)
	rebind(windows.STD_OUTPUT_HANDLE, "CONOUT$", windows.GENERIC_READ|windows.GENERIC_WRITE, &os.Stdout)
	rebind(windows.STD_ERROR_HANDLE, "CONOUT$", windows.GENERIC_READ|windows.GENERIC_WRITE, &os.Stderr)
	return true
}

// hasConsole reports whether the process has a console, by asking for the
// mode of the console output buffer.
func hasConsole() bool {
	name, _ := windows.UTF16PtrFromString("CONOUT$")
	h, err := windows.CreateFile(name, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var mode uint32
	return windows.GetConsoleMode(h, &mode) == nil
}

// rebind points the standard handle std, and *f, at the console device
// when the current handle is missing or unusable. A handle that refers to a
// file, pipe or console is left alone, so redirection keeps working.
func rebind(std uint32, device string, access uint32, f **os.File) {
	if h, err := windows.GetStdHandle(std); err == nil && h != 0 && h != windows.InvalidHandle {
		if t, err := windows.GetFileType(h); err == nil && t != windows.FILE_TYPE_UNKNOWN {
			return
		}
	}
	name, err := windows.UTF16PtrFromString(device)
	if err != nil {
		return
	}
	h, err := windows.CreateFile(name, access, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE,
		nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		return
	}
	if err := windows.SetStdHandle(std, h); err != nil {
		windows.CloseHandle(h)
		return
	}
	*f = os.NewFile(uintptr(h), device)
}
