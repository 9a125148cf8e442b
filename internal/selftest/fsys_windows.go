package selftest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf16"

	"golang.org/x/sys/windows"
)

// heldOpenBlocksRename: on Windows a file held open without
// FILE_SHARE_DELETE cannot be renamed over.
const heldOpenBlocksRename = true

// makeJunction makes link a junction (a mount-point reparse point) to the
// directory target, setting the reparse data itself with
// FSCTL_SET_REPARSE_POINT as mklink /J does. A file system that cannot
// hold one (FAT, or Wine's) is a skip.
func makeJunction(link, target string) error {
	if err := os.Mkdir(link, 0o700); err != nil {
		return err
	}
	subst := utf16.Encode([]rune(`\??\` + target))
	printName := utf16.Encode([]rune(target))
	var names []uint16
	names = append(append(names, subst...), 0)
	names = append(append(names, printName...), 0)
	// REPARSE_DATA_BUFFER for a mount point: the offsets and lengths
	// (bytes, without the NULs) of the substitute and print names, then
	// both names.
	data := binary.LittleEndian.AppendUint16(nil, 0)
	data = binary.LittleEndian.AppendUint16(data, uint16(2*len(subst)))
	data = binary.LittleEndian.AppendUint16(data, uint16(2*(len(subst)+1)))
	data = binary.LittleEndian.AppendUint16(data, uint16(2*len(printName)))
	for _, u := range names {
		data = binary.LittleEndian.AppendUint16(data, u)
	}
	buf := binary.LittleEndian.AppendUint32(nil, windows.IO_REPARSE_TAG_MOUNT_POINT)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(data)))
	buf = binary.LittleEndian.AppendUint16(buf, 0)
	buf = append(buf, data...)
	name, err := windows.UTF16PtrFromString(link)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(name, windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: link, Err: err}
	}
	defer windows.CloseHandle(h)
	var n uint32
	err = windows.DeviceIoControl(h, windows.FSCTL_SET_REPARSE_POINT, &buf[0], uint32(len(buf)), nil, 0, &n, nil)
	if errors.Is(err, windows.ERROR_NOT_SUPPORTED) || errors.Is(err, windows.ERROR_INVALID_FUNCTION) {
		return skip("this file system cannot hold a junction (FSCTL_SET_REPARSE_POINT: %v)", err)
	}
	if err != nil {
		return &os.PathError{Op: "FSCTL_SET_REPARSE_POINT", Path: link, Err: err}
	}
	return nil
}

// symlinkNotAllowed reports whether making a symbolic link failed for want
// of the privilege (ERROR_PRIVILEGE_NOT_HELD).
func symlinkNotAllowed(err error) bool {
	return errors.Is(err, windows.ERROR_PRIVILEGE_NOT_HELD) || errors.Is(err, windows.ERROR_NOT_SUPPORTED)
}

// runHoldChild opens path the way an editor or a scanner does — reading,
// sharing read and write but not delete — says "held", and keeps it open
// until its input ends.
func runHoldChild(path string, stdin io.Reader, stdout io.Writer) error {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		fmt.Fprintf(stdout, "open %s: %v\n", path, err)
		return err
	}
	defer windows.CloseHandle(h)
	fmt.Fprintln(stdout, "held")
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
	}
	return nil
}

// realDir is dir with links resolved and 8.3 aliases expanded (a temporary
// directory under C:\Users\ADALOV~1 would otherwise trip the fs tool's
// short-name rule).
func realDir(dir string) (string, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return "", err
	}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetLongPathName(p, &buf[0], uint32(len(buf)))
	if err != nil {
		return "", err
	}
	if n == 0 || int(n) > len(buf) {
		return "", errors.New("GetLongPathName: no answer")
	}
	return windows.UTF16ToString(buf[:n]), nil
}

// finalPathProbe asks Windows for the final path of dir, as the fs tool's
// containment check does (GetFinalPathNameByHandle), with room for the
// longest path Windows has.
func finalPathProbe(dir string) error {
	// The verbatim prefix lifts MAX_PATH for the open itself, so what is
	// probed is only the system's answer (Hearth's own open is the check).
	p, err := windows.UTF16PtrFromString(`\\?\` + dir)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(p, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	if _, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), 0); err != nil {
		return fmt.Errorf("GetFinalPathNameByHandle: %w", err)
	}
	return nil
}
