package fsops

import (
	"io/fs"
	"path/filepath"
	"sync"
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
// ELOOP at the first one), with (when stat is set) a stat of it, or nil
// if that failed. O_PATH opens without reading, so a FIFO cannot block it.
// A path walked so a moment ago that still reaches the same, unchanged
// file is answered by one statx (walked.recheck) instead of the open, the
// stat, the statfs and the close.
func linkFree(p string, stat bool) (fs.FileInfo, bool) {
	if noOpenat2.Load() {
		return nil, false
	}
	if stat {
		if info := walked.recheck(p); info != nil {
			return info, true
		}
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
	var stx unix.Statx_t
	byStatx := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_STATX_SYNC_AS_STAT, walkedMask, &stx) == nil
	if byStatx {
		info.st = statOf(&stx)
	} else if syscall.Fstat(fd, &info.st) != nil {
		return nil, true
	}
	var sfs unix.Statfs_t
	local := unix.Fstatfs(fd, &sfs) == nil && localFS(int64(sfs.Type))
	info.local = local && info.st.Mode&syscall.S_IFMT == syscall.S_IFREG
	if byStatx && local {
		walked.remember(p, &stx, info.local)
	}
	return info, true
}

// walked remembers paths linkFree found link-free on a local filesystem.
var walked walkCache

// walkedFor is how long a link-free walk is taken as still true of a path
// whose file is unchanged. A file keeps its identity (device, mount,
// inode, birth time) and its change time when a directory above it is
// moved elsewhere and a link put in its place; for at most this long such
// a path answers for the file it reached before, which never became
// another file.
const walkedFor = time.Second

// maxWalked bounds the paths remembered; at the bound they are forgotten
// together.
const maxWalked = 4096

// walkedMask is what a remembered walk's identity needs of statx, on top
// of the basic stats.
const walkedMask = unix.STATX_BASIC_STATS | unix.STATX_BTIME | unix.STATX_MNT_ID

type walkCache struct {
	mu sync.Mutex
	m  map[string]walkedPath
}

// walkedPath is the identity of the file a link-free walk reached, and
// whether it is a regular file on a local filesystem (fdInfo.local).
type walkedPath struct {
	at    time.Time
	id    fileIdentity
	local bool
}

// fileIdentity is what tells one file from every other and changes with
// any change to its own inode (a write, a chmod, a rename or a new link
// raises the change time): a reused inode number has another birth time.
type fileIdentity struct {
	devMajor, devMinor uint32
	mnt, ino           uint64
	btime, ctime       unix.StatxTimestamp
}

// identityOf is stx's identity, or false when statx did not give all of it
// (a filesystem without birth times).
func identityOf(stx *unix.Statx_t) (fileIdentity, bool) {
	const need = unix.STATX_INO | unix.STATX_CTIME | unix.STATX_BTIME | unix.STATX_MNT_ID
	if stx.Mask&need != need || stx.Btime == (unix.StatxTimestamp{}) {
		return fileIdentity{}, false
	}
	return fileIdentity{stx.Dev_major, stx.Dev_minor, stx.Mnt_id, stx.Ino, stx.Btime, stx.Ctime}, true
}

func (c *walkCache) remember(p string, stx *unix.Statx_t, local bool) {
	id, ok := identityOf(stx)
	if !ok {
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxWalked {
		c.m = make(map[string]walkedPath)
	}
	c.m[p] = walkedPath{at: now, id: id, local: local}
}

// recheck answers p with one statx that does not follow a link at its end,
// when p was walked link-free less than walkedFor ago and the statx finds
// the same file unchanged; else nil (and p is forgotten).
func (c *walkCache) recheck(p string) *fdInfo {
	c.mu.Lock()
	w, ok := c.m[p]
	c.mu.Unlock()
	if !ok {
		return nil
	}
	if age := time.Since(w.at); age < 0 || age >= walkedFor {
		c.forget(p)
		return nil
	}
	var stx unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_SYNC_AS_STAT, walkedMask, &stx) != nil {
		c.forget(p)
		return nil
	}
	if id, ok := identityOf(&stx); !ok || id != w.id {
		c.forget(p)
		return nil
	}
	processSeams.answered(p)
	return &fdInfo{name: filepath.Base(p), st: statOf(&stx), local: w.local}
}

func (c *walkCache) forget(p string) {
	c.mu.Lock()
	delete(c.m, p)
	c.mu.Unlock()
}

// statOf is stx as the stat(2) of the same file gives it.
func statOf(stx *unix.Statx_t) syscall.Stat_t {
	ts := func(t unix.StatxTimestamp) syscall.Timespec {
		return syscall.NsecToTimespec(t.Sec*1e9 + int64(t.Nsec))
	}
	st := syscall.Stat_t{
		Dev:  unix.Mkdev(stx.Dev_major, stx.Dev_minor),
		Ino:  stx.Ino,
		Mode: uint32(stx.Mode),
		Uid:  stx.Uid,
		Gid:  stx.Gid,
		Rdev: unix.Mkdev(stx.Rdev_major, stx.Rdev_minor),
		Size: int64(stx.Size),
		Atim: ts(stx.Atime),
		Mtim: ts(stx.Mtime),
		Ctim: ts(stx.Ctime),
	}
	// Their types differ between architectures.
	setInt(&st.Nlink, stx.Nlink)
	setInt(&st.Blksize, stx.Blksize)
	setInt(&st.Blocks, stx.Blocks)
	return st
}

func setInt[T ~int32 | ~int64 | ~uint32 | ~uint64, V uint32 | uint64](dst *T, v V) { *dst = T(v) }

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
