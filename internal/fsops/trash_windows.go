package fsops

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
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

// trashSlot: the shell chooses the Recycle Bin's names itself, so there
// is nothing to reserve; Where is found once the item is there.
type trashSlot struct{ Where string }

func reserveTrash(string) (trashSlot, error) { return trashSlot{}, nil }

func (trashSlot) release() {}

// reservedTrash: the Recycle Bin reserves no place, so none is found
// again; what is left goes there one by one.
func reservedTrash(string) trashSlot { return trashSlot{} }

// put moves the item at path to the Recycle Bin through the shell and
// returns where it is there ("" when the bin does not say, as under an
// emulator whose bin is elsewhere: it is there, but an undo cannot take
// it back by itself).
func (trashSlot) put(path string) (string, error) {
	return trashItem(path)
}

// trashItem moves the file or folder at path to the Recycle Bin.
func trashItem(path string) (string, error) {
	since := time.Now().Add(-2 * time.Second)
	if err := MoveToTrash(path); err != nil {
		return "", err
	}
	return findInBin(path, since), nil
}

// findInBin is the $R item the Recycle Bin of path's drive keeps for
// path, deleted at or after since: the newest $I record naming path (its
// format: version, size, deletion time, then the original path).
func findInBin(path string, since time.Time) string {
	bin, err := userBin(path)
	if err != nil {
		return ""
	}
	des, err := os.ReadDir(bin)
	if err != nil {
		return ""
	}
	best, bestAt := "", time.Time{}
	for _, de := range des {
		name := de.Name()
		if !strings.HasPrefix(name, "$I") {
			continue
		}
		orig, at, ok := readBinRecord(filepath.Join(bin, name))
		if !ok || !strings.EqualFold(orig, path) || at.Before(since) || at.Before(bestAt) {
			continue
		}
		best, bestAt = filepath.Join(bin, "$R"+name[2:]), at
	}
	return best
}

// findTrashed is the item of the Recycle Bin that was at path, put there
// at or after since ("" when the bin does not say).
func findTrashed(path string, since time.Time) string { return findInBin(path, since) }

// userBin is the calling user's folder of the Recycle Bin on path's drive.
func userBin(path string) (string, error) {
	tok := windows.GetCurrentProcessToken()
	u, err := tok.GetTokenUser()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.VolumeName(path)+`\`, "$Recycle.Bin", u.User.Sid.String()), nil
}

// readBinRecord reads a $I record: the original path and the deletion
// time (version 1: the path in 260 fixed characters; version 2: counted).
func readBinRecord(p string) (string, time.Time, bool) {
	b, err := os.ReadFile(p)
	if err != nil || len(b) < 24 {
		return "", time.Time{}, false
	}
	version := binary.LittleEndian.Uint64(b[0:8])
	ft := windows.Filetime{LowDateTime: binary.LittleEndian.Uint32(b[16:20]), HighDateTime: binary.LittleEndian.Uint32(b[20:24])}
	var name []byte
	switch {
	case version == 1 && len(b) >= 24+520:
		name = b[24 : 24+520]
	case version == 2 && len(b) >= 28:
		n := int(binary.LittleEndian.Uint32(b[24:28]))
		if len(b) < 28+2*n {
			return "", time.Time{}, false
		}
		name = b[28 : 28+2*n]
	default:
		return "", time.Time{}, false
	}
	u := make([]uint16, len(name)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(name[2*i:])
	}
	return windows.UTF16ToString(u), time.Unix(0, ft.Nanoseconds()), true
}

// restoreFromTrash moves the item at where (a $R item of the Recycle
// Bin) back to path, which must not exist, and removes its $I record.
func restoreFromTrash(where, path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("put %s back from the Recycle Bin: %w", path, fs.ErrExist)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("put %s back from the Recycle Bin: %w", path, err)
	}
	if err := moveTree(where, path); err != nil {
		return fmt.Errorf("put %s back from the Recycle Bin: %w", path, err)
	}
	if base := filepath.Base(where); strings.HasPrefix(base, "$R") {
		os.Remove(filepath.Join(filepath.Dir(where), "$I"+base[2:]))
	}
	return nil
}

// inTrash reports whether where is an item of a Recycle Bin (a path
// trashItem gave), so restore never takes anything from elsewhere.
func inTrash(where string) bool {
	return strings.HasPrefix(filepath.Base(where), "$R") &&
		strings.EqualFold(filepath.Base(filepath.Dir(filepath.Dir(where))), "$Recycle.Bin")
}

// crossVolume reports whether a rename failed because its two paths are
// on different volumes.
func crossVolume(err error) bool { return errors.Is(err, windows.ERROR_NOT_SAME_DEVICE) }

// trashInfoOf: the Recycle Bin's records are the shell's, never removed
// by Hearth on its own.
func trashInfoOf(string) string { return "" }
