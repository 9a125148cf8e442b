package proc

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/windows"
)

// kernel32 console calls that x/sys/windows does not wrap.
var (
	procAttachConsole = windows.NewLazySystemDLL("kernel32.dll").NewProc("AttachConsole")
	procFreeConsole   = windows.NewLazySystemDLL("kernel32.dll").NewProc("FreeConsole")
)

// consoleMu serializes borrowing a child's console (see interrupt). A
// process has at most one console, so this guards process-wide state and
// cannot live in a Tree.
var consoleMu sync.Mutex

// adjust lets the child share Hearth's console when Hearth has one: no new
// window appears (the terminal already shows one) and CTRL_BREAK_EVENT can
// then be sent to it directly. Without a console (the tray app) the child
// keeps CREATE_NO_WINDOW, i.e. a hidden console of its own.
func (t *Tree) adjust(attr *syscall.SysProcAttr) bool {
	consoleMu.Lock()
	defer consoleMu.Unlock()
	if !haveConsole() {
		return false
	}
	attr.CreationFlags &^= windows.CREATE_NO_WINDOW
	return true
}

// haveConsole reports whether Hearth is attached to a console.
func haveConsole() bool {
	_, err := windows.GetConsoleCP()
	return err == nil
}

// interrupt sends CTRL_BREAK_EVENT to the child's console process group
// (the child was created with CREATE_NEW_PROCESS_GROUP, so its pid names
// the group and Hearth is not in it). An event can only be sent to a
// console the sender is attached to: when the child has a hidden console
// of its own, Hearth (which then has none) attaches to it for the moment
// of sending.
func (t *Tree) interrupt(pid int) error {
	if t.shared {
		if err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid)); err != nil {
			return fmt.Errorf("send CTRL_BREAK to process %d: %w", pid, err)
		}
		return nil
	}
	consoleMu.Lock()
	defer consoleMu.Unlock()
	if haveConsole() {
		return fmt.Errorf("send CTRL_BREAK to process %d: it has a console of its own and Hearth is attached to another", pid)
	}
	if err := procAttachConsole.Find(); err != nil {
		return fmt.Errorf("send CTRL_BREAK to process %d: %w", pid, err)
	}
	if r, _, err := procAttachConsole.Call(uintptr(uint32(pid))); r == 0 {
		if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
			return os.ErrProcessDone
		}
		return fmt.Errorf("attach to the console of process %d: %w", pid, err)
	}
	defer procFreeConsole.Call()
	if err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid)); err != nil {
		return fmt.Errorf("send CTRL_BREAK to process %d: %w", pid, err)
	}
	return nil
}
