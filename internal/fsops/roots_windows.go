package fsops

import (
	"io/fs"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// pathFold: NTFS names compare case-insensitively.
const pathFold = true

// hasShortNames: NTFS may give names an 8.3 alias.
const hasShortNames = true

// volumeNameDOS is VOLUME_NAME_DOS|FILE_NAME_NORMALIZED (both 0): a drive
// letter path with normalized names.
const volumeNameDOS = 0

func platformPathProblem(p string) (Rule, string) { return windowsPathProblem(p) }

// evalExisting returns the real path of an existing path as Windows itself
// resolves it when opening: GetFinalPathNameByHandle follows symlinks and
// junctions (mount points) and normalizes case and 8.3 names. It is used
// instead of filepath.EvalSymlinks, which since Go 1.23 does not follow
// junctions, so a junction could otherwise lead out of a root unnoticed.
//
// It gives no stat of the path (the caller makes one).
func evalExisting(p string, _ bool) (string, fs.FileInfo, error) {
	real, err := finalPath(p)
	return real, nil, err
}

func finalPath(p string) (string, error) {
	// Past MAX_PATH the open needs the \\?\ prefix (a program that is not
	// long-path aware gets no other way); the answer is stripped of it.
	name, err := windows.UTF16PtrFromString(atomicfile.ExtendedLength(p))
	if err != nil {
		return "", err
	}
	h, err := windows.CreateFile(name, 0,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return "", &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, 300)
	for {
		n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), volumeNameDOS)
		if err != nil {
			return "", &fs.PathError{Op: "GetFinalPathNameByHandle", Path: p, Err: err}
		}
		if n < uint32(len(buf)) {
			return stripVerbatim(windows.UTF16ToString(buf[:n])), nil
		}
		buf = make([]uint16, n)
	}
}

// stripVerbatim turns \\?\C:\x into C:\x and \\?\UNC\srv\share into
// \\srv\share (which no root can contain).
func stripVerbatim(p string) string {
	if rest, ok := strings.CutPrefix(p, `\\?\UNC\`); ok {
		return `\\` + rest
	}
	return strings.TrimPrefix(p, `\\?\`)
}

// longPathName returns the long form of an existing path, expanding 8.3
// short names.
func longPathName(p string) (string, error) {
	in, err := syscall.UTF16PtrFromString(p)
	if err != nil {
		return "", err
	}
	buf := make([]uint16, 260)
	for {
		n, err := syscall.GetLongPathName(in, &buf[0], uint32(len(buf)))
		if err != nil {
			return "", err
		}
		if n < uint32(len(buf)) {
			return syscall.UTF16ToString(buf[:n]), nil
		}
		buf = make([]uint16, n)
	}
}
