package tray

import (
	"errors"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// rpcEChangedMode is RPC_E_CHANGED_MODE: CoInitializeEx asked for another
// apartment than the thread is already in.
const rpcEChangedMode = syscall.Errno(0x80010106)

// TestOnSTA: the function runs on a thread that is a single-threaded
// apartment (asking it to become multithreaded fails with
// RPC_E_CHANGED_MODE), even when the caller's own thread is a
// multithreaded apartment, and the caller's thread is left as it was.
func TestOnSTA(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := windows.CoInitializeEx(0, windows.COINIT_MULTITHREADED); err != nil && !errors.Is(err, sFalse) {
		t.Fatalf("make the test's thread an MTA: %v", err)
	}
	defer windows.CoUninitialize()
	callerTID := windows.GetCurrentThreadId()

	var tid uint32
	var mta error
	ran := false
	err := onSTA(func() error {
		ran = true
		tid = windows.GetCurrentThreadId()
		mta = windows.CoInitializeEx(0, windows.COINIT_MULTITHREADED)
		if mta == nil || errors.Is(mta, sFalse) {
			windows.CoUninitialize()
		}
		return errors.New("from fn")
	})
	if !ran || err == nil || err.Error() != "from fn" {
		t.Fatalf("onSTA must run fn and return its error: ran=%v err=%v", ran, err)
	}
	if tid == callerTID {
		t.Fatal("fn ran on the caller's thread")
	}
	if !errors.Is(mta, rpcEChangedMode) {
		t.Fatalf("fn's thread is not a single-threaded apartment: CoInitializeEx(MTA) there gave %v, want RPC_E_CHANGED_MODE", mta)
	}
	// The caller's thread is still the MTA it was.
	if err := windows.CoInitializeEx(0, windows.COINIT_MULTITHREADED); !errors.Is(err, sFalse) {
		t.Fatalf("the caller's apartment changed: CoInitializeEx(MTA) gave %v, want S_FALSE", err)
	} else {
		windows.CoUninitialize()
	}
}

// TestShellOpenError: ShellExecuteEx runs (on its apartment) and its
// failure comes back as an error naming the call and the cause, with no
// shell dialog to hang on; a file that does not exist is a harmless
// target that opens nothing.
func TestShellOpenError(t *testing.T) {
	target := t.TempDir() + `\no-such-file.hearth-test`
	err := shellOpen(target)
	if err == nil {
		t.Fatalf("ShellExecuteEx of a missing file %s succeeded", target)
	}
	t.Logf("ShellExecuteEx of a missing file: %v", err)
	if !strings.Contains(err.Error(), "ShellExecuteEx") || !errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
		t.Fatalf("ShellExecuteEx of a missing file: %v, want ERROR_FILE_NOT_FOUND from ShellExecuteEx", err)
	}
	// OpenURL never reaches the shell with anything but a loopback URL.
	if err := OpenURL("file:///C:/Windows/notepad.exe"); err == nil || !strings.Contains(err.Error(), "not a loopback http URL") {
		t.Fatalf("OpenURL of a file URL: %v", err)
	}
}

// TestOpenInfo: the request is synchronous (SEE_MASK_NOASYNC, which
// Microsoft requires of a thread that ends right after the call, as
// onSTA's does) and shows no shell dialog, and it has SHELLEXECUTEINFOW's
// size, which ShellExecuteEx checks.
func TestOpenInfo(t *testing.T) {
	verb, file := new(uint16), new(uint16)
	info := openInfo(verb, file)
	if info.fMask&seeMaskNoAsync == 0 || info.fMask&seeMaskFlagNoUI == 0 {
		t.Fatalf("fMask %#x lacks SEE_MASK_NOASYNC or SEE_MASK_FLAG_NO_UI", info.fMask)
	}
	if info.lpVerb != verb || info.lpFile != file || info.nShow != windows.SW_SHOWNORMAL {
		t.Fatalf("openInfo did not carry the verb, file and SW_SHOWNORMAL: %+v", info)
	}
	want := uint32(112) // x64 and arm64
	if unsafe.Sizeof(uintptr(0)) == 4 {
		want = 60
	}
	if info.cbSize != want {
		t.Fatalf("cbSize %d, want SHELLEXECUTEINFOW's %d", info.cbSize, want)
	}
}
