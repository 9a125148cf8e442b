package fsops

import (
	"io/fs"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// evalExisting returns the real path of an existing path, and what an
// fstat of it says when that came on the way. p is clean and absolute with
// no ".." (Resolve refuses those; Clean removes them from a configured
// root). When the kernel walks p to an existing file without meeting a
// link, p is its real path as it is: one openat2, an fstat of what it
// opened (the stat the caller would otherwise make by path) and a close,
// where filepath.EvalSymlinks makes an lstat per component. A path with a
// link in it, a missing one, and a kernel without openat2 (before 5.6, or
// a sandbox that filters it) go to filepath.EvalSymlinks, without a stat.
func evalExisting(p string) (string, fs.FileInfo, error) {
	if info, ok := linkFree(p); ok {
		return p, info, nil
	}
	real, err := filepath.EvalSymlinks(p)
	return real, nil, err
}

var (
	// noOpenat2 is set once openat2 answered ENOSYS.
	noOpenat2 atomic.Bool
	// linkFreeHow is how linkFree opens (the kernel only reads it).
	linkFreeHow = unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
)

// linkFree reports whether p exists and no component of it, the last
// included, is a symbolic link (RESOLVE_NO_SYMLINKS: the walk fails with
// ELOOP at the first one), with an fstat of it (nil if that failed).
// O_PATH opens without reading, so a FIFO cannot block it.
func linkFree(p string) (fs.FileInfo, bool) {
	if noOpenat2.Load() {
		return nil, false
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &linkFreeHow)
	if err != nil {
		if err == unix.ENOSYS {
			noOpenat2.Store(true)
		}
		return nil, false
	}
	defer unix.Close(fd)
	info := &fdInfo{name: filepath.Base(p)}
	if syscall.Fstat(fd, &info.st) != nil {
		return nil, true
	}
	return info, true
}

// fdInfo is an fstat's answer as an fs.FileInfo with the modes os.Stat
// gives (TestEvalExistingMatchesEvalSymlinks compares them).
type fdInfo struct {
	name string
	st   syscall.Stat_t
}

func (i *fdInfo) Name() string       { return i.name }
func (i *fdInfo) Size() int64        { return i.st.Size }
func (i *fdInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *fdInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i *fdInfo) Sys() any           { return &i.st }

func (i *fdInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if i.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if i.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if i.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
