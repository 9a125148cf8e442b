package fsops

import (
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// evalExisting returns the real path of an existing path. p is clean and
// absolute with no ".." (Resolve refuses those; Clean removes them from a
// configured root). When the kernel walks p to an existing file without
// meeting a link, p is its real path as it is: one openat2 and a close,
// where filepath.EvalSymlinks makes an lstat per component. A path with
// a link in it, a missing one, and a kernel without openat2 (before 5.6,
// or a sandbox that filters it) go to filepath.EvalSymlinks.
func evalExisting(p string) (string, error) {
	if linkFree(p) {
		return p, nil
	}
	return filepath.EvalSymlinks(p)
}

var (
	// noOpenat2 is set once openat2 answered ENOSYS.
	noOpenat2 atomic.Bool
	// linkFreeHow is how linkFree opens (the kernel only reads it).
	linkFreeHow = unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
)

// linkFree reports whether p exists and no component of it, the last
// included, is a symbolic link (RESOLVE_NO_SYMLINKS: the walk fails with
// ELOOP at the first one). O_PATH reads nothing, so a FIFO cannot block
// it.
func linkFree(p string) bool {
	if noOpenat2.Load() {
		return false
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &linkFreeHow)
	if err != nil {
		if err == unix.ENOSYS {
			noOpenat2.Store(true)
		}
		return false
	}
	unix.Close(fd)
	return true
}
