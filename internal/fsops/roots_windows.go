package fsops

import (
	"syscall"
)

// pathFold: NTFS names compare case-insensitively.
const pathFold = true

// hasShortNames: NTFS may give names an 8.3 alias.
const hasShortNames = true

func platformPathProblem(p string) (Rule, string) { return windowsPathProblem(p) }

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
