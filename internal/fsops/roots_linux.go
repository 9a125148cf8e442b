package fsops

import (
	"io/fs"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// evalExisting returns the real path of an existing path, and (when stat
// is set) what an fstat of it says when that came on the way. p is clean
// and absolute with no ".." (Resolve refuses those; Clean removes them
// from a configured root). When the kernel walks p to an existing file
// without meeting a link, p is its real path as it is: one openat2 (and
// for stat an fstat of what it opened, the stat the caller would otherwise
// make by path) and a close, where filepath.EvalSymlinks makes an lstat
// per component. A path with a link in it, a missing one, and a kernel
// without openat2 (before 5.6, or a sandbox that filters it) go to
// filepath.EvalSymlinks, without a stat.
func evalExisting(p string, stat bool) (string, fs.FileInfo, error) {
	if info, ok := linkFree(p, stat); ok {
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
// ELOOP at the first one), with (when stat is set) an fstat of it, or nil
// if that failed. O_PATH opens without reading, so a FIFO cannot block it.
func linkFree(p string, stat bool) (fs.FileInfo, bool) {
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
	if !stat {
		return nil, true
	}
	info := &fdInfo{name: filepath.Base(p)}
	if syscall.Fstat(fd, &info.st) != nil {
		return nil, true
	}
	if info.st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		var sfs unix.Statfs_t
		info.local = unix.Fstatfs(fd, &sfs) == nil && localFS(int64(sfs.Type))
	}
	return info, true
}

// localFS reports whether a filesystem of this statfs type keeps a file's
// attributes itself (no network, no user-space server): its fstat is the
// file as it is now.
func localFS(magic int64) bool {
	switch magic {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, unix.BCACHEFS_SUPER_MAGIC, unix.RAMFS_MAGIC,
		unix.MSDOS_SUPER_MAGIC, unix.EXFAT_SUPER_MAGIC, zfsSuperMagic:
		return true
	}
	return false
}

// zfsSuperMagic is OpenZFS's statfs type (not in x/sys/unix).
const zfsSuperMagic = 0x2fc12fc1

// freshStat reports whether info is the kernel's own fstat of a regular
// file on a local filesystem: what the file is now, so a hash remembered
// for it needs no open. A stat of a network filesystem may come from its
// attribute cache, which the open refreshes.
func freshStat(info fs.FileInfo) bool {
	fi, ok := info.(*fdInfo)
	return ok && fi.local
}

// changeTime is the file's status change time, in the hash cache's key:
// a rewrite that keeps size and modification time (touch -d, rsync -t)
// or a change of mode still changes it.
func changeTime(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}

// fdInfo is an fstat's answer as an fs.FileInfo with the modes os.Stat
// gives (TestEvalExistingMatchesEvalSymlinks compares them).
type fdInfo struct {
	name  string
	st    syscall.Stat_t
	local bool // a regular file on a local filesystem (freshStat)
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
