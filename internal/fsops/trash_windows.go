package fsops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

var procSHFileOperationW = windows.NewLazySystemDLL("shell32.dll").NewProc("SHFileOperationW")

// shFileOp is SHFILEOPSTRUCTW.
type shFileOp struct {
	hwnd                  uintptr
	wFunc                 uint32
	pFrom                 *uint16
	pTo                   *uint16
	fFlags                uint16
	fAnyOperationsAborted int32
	hNameMappings         uintptr
	lpszProgressTitle     *uint16
}

const (
	foDelete          = 0x0003
	fofSilent         = 0x0004
	fofNoConfirmation = 0x0010
	fofAllowUndo      = 0x0040
	fofNoErrorUI      = 0x0400
	// deAccessDeniedSrc is SHFileOperation's own code for a source it
	// could not take (held open by another program).
	deAccessDeniedSrc = 0x78
)

// MoveToTrash moves the file at path to the Recycle Bin, never deleting
// it: the shell's SHFileOperation with FOF_ALLOWUNDO, silently. A file
// another program holds open is reported as a sharing violation, which
// Replacer retries like a held rename. Undo uses it (as Replacer.Remove)
// for a file a chat created.
func MoveToTrash(path string) error {
	if err := procSHFileOperationW.Find(); err != nil {
		return fmt.Errorf("move %s to the Recycle Bin: %w", path, err)
	}
	from, err := windows.UTF16FromString(path)
	if err != nil {
		return fmt.Errorf("move %s to the Recycle Bin: %w", path, err)
	}
	from = append(from, 0) // the list ends with two NULs
	op := shFileOp{wFunc: foDelete, pFrom: &from[0], fFlags: fofAllowUndo | fofNoConfirmation | fofSilent | fofNoErrorUI}
	r, _, _ := procSHFileOperationW.Call(uintptr(unsafe.Pointer(&op)))
	switch {
	case r == uintptr(windows.ERROR_SHARING_VIOLATION), r == uintptr(windows.ERROR_ACCESS_DENIED),
		r == uintptr(windows.ERROR_LOCK_VIOLATION), r == deAccessDeniedSrc:
		return fmt.Errorf("move %s to the Recycle Bin: %w", path, windows.ERROR_SHARING_VIOLATION)
	case r != 0:
		return fmt.Errorf("move %s to the Recycle Bin: shell error 0x%x", path, r)
	case op.fAnyOperationsAborted != 0:
		return fmt.Errorf("move %s to the Recycle Bin: cancelled", path)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("move %s to the Recycle Bin: it is still there: %w", path, windows.ERROR_SHARING_VIOLATION)
	}
	return nil
}
