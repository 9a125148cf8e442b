package fsops

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestEvalExistingMatchesEvalSymlinks: on Linux a path without links is
// answered by one openat2 (linkFree) with an fstat that says what os.Stat
// says (type, permission and special mode bits, size, time, the same
// file), and every path gets the answer filepath.EvalSymlinks gives: plain
// paths, relative and absolute links in the middle and at the end, links
// to links and to directories, a FIFO (which must not block); a missing
// path, a path through a file and a link loop fail as EvalSymlinks fails.
func TestEvalExistingMatchesEvalSymlinks(t *testing.T) {
	dir := realTempDir(t)
	must := func(err error) { t.Helper(); mustOK(t, err) }
	must(os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "real", "sub", "f.txt"), []byte("x"), 0o640))
	must(syscall.Mkfifo(filepath.Join(dir, "real", "fifo"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "real", "setuid"), nil, 0o755))
	must(os.Chmod(filepath.Join(dir, "real", "setuid"), 0o755|fs.ModeSetuid|fs.ModeSetgid))
	must(os.Mkdir(filepath.Join(dir, "sticky"), 0o755))
	must(os.Chmod(filepath.Join(dir, "sticky"), 0o777|fs.ModeSticky))
	must(os.Symlink("real", filepath.Join(dir, "rel")))
	must(os.Symlink(filepath.Join(dir, "real", "sub"), filepath.Join(dir, "abs")))
	must(os.Symlink("sub/f.txt", filepath.Join(dir, "real", "tofile")))
	must(os.Symlink("rel", filepath.Join(dir, "chain")))
	must(os.Symlink("loop2", filepath.Join(dir, "loop1")))
	must(os.Symlink("loop1", filepath.Join(dir, "loop2")))

	if _, ok := linkFree(dir, true); !ok {
		t.Fatalf("openat2 does not answer here (noOpenat2 %v): the link-free path is never taken", noOpenat2.Load())
	}
	for _, tc := range []struct {
		path     string
		linkFree bool
	}{
		{dir, true},
		{"/", true},
		{filepath.Join(dir, "real"), true},
		{filepath.Join(dir, "real", "sub", "f.txt"), true},
		{filepath.Join(dir, "real", "fifo"), true},
		{filepath.Join(dir, "real", "setuid"), true},
		{filepath.Join(dir, "sticky"), true},
		{"/dev/null", true},
		{filepath.Join(dir, "rel"), false},
		{filepath.Join(dir, "rel", "sub", "f.txt"), false},
		{filepath.Join(dir, "abs", "f.txt"), false},
		{filepath.Join(dir, "real", "tofile"), false},
		{filepath.Join(dir, "chain", "tofile"), false},
	} {
		info, ok := linkFree(tc.path, true)
		if ok != tc.linkFree {
			t.Errorf("linkFree(%s) = %v, want %v", tc.path, ok, tc.linkFree)
		}
		want, err := filepath.EvalSymlinks(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		got, ginfo, err := evalExisting(tc.path, true)
		if err != nil || got != want {
			t.Errorf("evalExisting(%s) = %s, %v; EvalSymlinks %s", tc.path, got, err, want)
		}
		if !tc.linkFree {
			if ginfo != nil {
				t.Errorf("evalExisting(%s) gave a stat of a path with a link", tc.path)
			}
			continue
		}
		if info == nil || ginfo == nil {
			t.Fatalf("linkFree(%s) gave no stat", tc.path)
		}
		st, err := os.Stat(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		// info is the walk's stat, ginfo (for a path walked a moment ago)
		// the recheck's.
		for _, info := range []fs.FileInfo{info, ginfo} {
			a, b := info.Sys().(*syscall.Stat_t), st.Sys().(*syscall.Stat_t)
			if info.Name() != st.Name() || info.Mode() != st.Mode() || info.Size() != st.Size() ||
				!info.ModTime().Equal(st.ModTime()) || info.IsDir() != st.IsDir() || a.Dev != b.Dev || a.Ino != b.Ino ||
				a.Ctim != b.Ctim || a.Nlink != b.Nlink || a.Uid != b.Uid || a.Rdev != b.Rdev {
				t.Errorf("linkFree(%s): %s %v %d %v, os.Stat %s %v %d %v", tc.path,
					info.Name(), info.Mode(), info.Size(), info.ModTime(), st.Name(), st.Mode(), st.Size(), st.ModTime())
			}
		}
	}
	for _, tc := range []struct {
		path     string
		notExist bool
	}{
		{filepath.Join(dir, "missing"), true},
		{filepath.Join(dir, "real", "missing", "deeper"), true},
		{filepath.Join(dir, "rel", "missing"), true},
		{filepath.Join(dir, "real", "sub", "f.txt", "child"), false},
		{filepath.Join(dir, "loop1"), false},
	} {
		if _, ok := linkFree(tc.path, true); ok {
			t.Errorf("linkFree(%s): true for a path that does not resolve", tc.path)
		}
		_, wantErr := filepath.EvalSymlinks(tc.path)
		_, info, err := evalExisting(tc.path, true)
		if info != nil || err == nil || wantErr == nil || err.Error() != wantErr.Error() || errors.Is(err, fs.ErrNotExist) != tc.notExist {
			t.Errorf("evalExisting(%s): %v; EvalSymlinks %v; want not exist %v", tc.path, err, wantErr, tc.notExist)
		}
	}
}

// realTempDir is t.TempDir with its links resolved: the walks compare
// real paths.
func realTempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	mustOK(t, err)
	return dir
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestResolveGivesInfoOnlyForThePathItself: a path that does not exist yet
// resolves through its existing parent, and the parent's stat is not
// passed off as the path's.
func TestResolveGivesInfoOnlyForThePathItself(t *testing.T) {
	dir := t.TempDir()
	r, err := NewRoots([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	real, info, err := r.resolveInfo(filepath.Join(dir, "a.txt"), true)
	if err != nil || info == nil || info.Size() != 3 || !info.Mode().IsRegular() {
		t.Fatalf("resolveInfo(a.txt) = %s, %v, %v", real, info, err)
	}
	real, info, err = r.resolveInfo(filepath.Join(dir, "new", "b.txt"), true)
	if err != nil || info != nil || real != filepath.Join(dir, "new", "b.txt") {
		t.Fatalf("resolveInfo(new/b.txt) = %s, %v, %v: want the path and no stat", real, info, err)
	}
}

// TestFreshStatOnlyForLocalRegularFiles: only the fstat of a regular file
// on a local filesystem lets stat answer a remembered hash without opening
// the file; a directory's, a stat by path, and (by its statfs type) a
// network or user-space filesystem's do not.
func TestFreshStatOnlyForLocalRegularFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(dir, &sfs); err != nil {
		t.Fatal(err)
	}
	info, ok := linkFree(file, true)
	if !ok || info == nil {
		t.Fatal("linkFree gave no stat of a plain file")
	}
	if got, want := freshStat(info), localFS(int64(sfs.Type)); got != want {
		t.Errorf("freshStat of a file on a filesystem of type %#x = %v, want %v", sfs.Type, got, want)
	}
	if d, _ := linkFree(dir, true); d == nil || freshStat(d) {
		t.Errorf("freshStat of a directory: %v", d)
	}
	if st, err := os.Stat(file); err != nil || freshStat(st) {
		t.Errorf("freshStat of a stat by path: %v", err)
	}
	if info, _ := linkFree(file, false); info != nil {
		t.Errorf("linkFree without stat gave %v", info)
	}
	for _, magic := range []int64{unix.NFS_SUPER_MAGIC, unix.SMB2_SUPER_MAGIC, unix.CIFS_SUPER_MAGIC, unix.FUSE_SUPER_MAGIC,
		unix.V9FS_MAGIC, unix.CEPH_SUPER_MAGIC, unix.AFS_FS_MAGIC} {
		if localFS(magic) {
			t.Errorf("localFS(%#x): a network or user-space filesystem taken for local", magic)
		}
	}
	for _, magic := range []int64{unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC} {
		if !localFS(magic) {
			t.Errorf("localFS(%#x) = false", magic)
		}
	}
}

// TestStatSeesARewriteThatKeepsSizeAndTime: a file rewritten at the same
// size with its modification time put back (rsync -t, touch -d) gets its
// new hash: the change time is in the hash cache's key.
func TestStatSeesARewriteThatKeepsSizeAndTime(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	path := env.path("same.txt")
	if err := os.WriteFile(path, []byte("aaaa"), 0o600); err != nil {
		t.Fatal(err)
	}
	first, err := env.e.Stat(ctx, StatInput{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("bbbb"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, first.MTime, first.MTime); err != nil {
		t.Fatal(err)
	}
	for _, quick := range []bool{false, true} {
		var got StatResult
		if quick {
			got, _, err = env.e.QuickStat(ctx, StatInput{Path: path})
		} else {
			got, err = env.e.Stat(ctx, StatInput{Path: path})
		}
		if err != nil || !got.MTime.Equal(first.MTime) || got.Size != first.Size {
			t.Fatalf("stat after the rewrite: %+v %v (want size and time as before)", got, err)
		}
		if got.SHA256 == first.SHA256 {
			t.Fatalf("stat (quick %v) after a rewrite that kept size and time: the old hash %s", quick, got.SHA256)
		}
	}
}

// walkedFile makes dir/name/f.txt and reports whether a link-free walk of
// it is remembered here (a filesystem with birth times).
func walkedFile(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name, "f.txt")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := linkFree(p, true); !ok {
		t.Fatalf("linkFree(%s) = false", p)
	}
	walked.mu.Lock()
	_, ok := walked.m[p]
	walked.mu.Unlock()
	if !ok {
		t.Skipf("a link-free walk is not remembered on this filesystem (no birth times?)")
	}
	return p
}

// TestWalkedPathIsRecheckedEachTime: a path walked link-free a moment ago
// is answered by one statx while it reaches the same unchanged file; a
// link put in place of a directory above it or of the file itself, a
// change to the file, and age each send it back to the walk.
func TestWalkedPathIsRecheckedEachTime(t *testing.T) {
	dir := realTempDir(t)
	must := func(err error) { t.Helper(); mustOK(t, err) }
	var rechecks atomic.Int64
	setSeams(t, seams{rechecked: func(string) { rechecks.Add(1) }})
	hit := func(p string) (fs.FileInfo, bool, bool) {
		t.Helper()
		before := rechecks.Load()
		info, ok := linkFree(p, true)
		return info, ok, rechecks.Load() > before
	}

	a := walkedFile(t, dir, "a")
	if info, ok, rechecked := hit(a); !ok || !rechecked || info.Size() != 1 {
		t.Fatalf("second linkFree(a/f.txt): %v %v rechecked %v, want the recheck's answer", info, ok, rechecked)
	}

	// A directory above moved away and a link to another file's directory
	// put in its place: another file, so the walk, which meets the link.
	walkedFile(t, dir, "other")
	must(os.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "a-moved")))
	must(os.Symlink("other", filepath.Join(dir, "a")))
	if _, ok, rechecked := hit(a); ok || rechecked {
		t.Fatalf("linkFree through a link put in place of a directory: ok %v rechecked %v", ok, rechecked)
	}
	if real, _, err := evalExisting(a, true); err != nil || real != filepath.Join(dir, "other", "f.txt") {
		t.Fatalf("evalExisting through the link = %s, %v", real, err)
	}

	// The file itself replaced by a link.
	b := walkedFile(t, dir, "b")
	must(os.Remove(b))
	must(os.Symlink(filepath.Join(dir, "other", "f.txt"), b))
	if _, ok, rechecked := hit(b); ok || rechecked {
		t.Fatalf("linkFree of a file replaced by a link: ok %v rechecked %v", ok, rechecked)
	}

	// A change to the file (its change time) sends it to the walk, which
	// remembers it again.
	c := walkedFile(t, dir, "c")
	must(os.Chmod(c, 0o640))
	if info, ok, rechecked := hit(c); !ok || rechecked || info.Mode().Perm() != 0o640 {
		t.Fatalf("linkFree after a chmod: %v %v rechecked %v", info, ok, rechecked)
	}
	if info, ok, rechecked := hit(c); !ok || !rechecked || info.Mode().Perm() != 0o640 {
		t.Fatalf("linkFree after the walk remembered the chmod: %v %v rechecked %v", info, ok, rechecked)
	}

	// The directory above moved and a link to where it went put in its
	// place: the same file, unchanged, so for at most walkedFor the path
	// answers for it; after that the walk meets the link.
	d := walkedFile(t, dir, "d")
	must(os.Rename(filepath.Join(dir, "d"), filepath.Join(dir, "d-moved")))
	must(os.Symlink("d-moved", filepath.Join(dir, "d")))
	moved, err := os.Stat(filepath.Join(dir, "d-moved", "f.txt"))
	must(err)
	same := func(info fs.FileInfo) bool {
		a, b := info.Sys().(*syscall.Stat_t), moved.Sys().(*syscall.Stat_t)
		return a.Dev == b.Dev && a.Ino == b.Ino
	}
	if info, ok, rechecked := hit(d); !ok || !rechecked || !same(info) {
		t.Fatalf("linkFree within walkedFor of the walk: %v %v rechecked %v, want the same file", info, ok, rechecked)
	}
	walked.mu.Lock()
	w := walked.m[d]
	w.at = w.at.Add(-walkedFor)
	walked.m[d] = w
	walked.mu.Unlock()
	if _, ok, rechecked := hit(d); ok || rechecked {
		t.Fatalf("linkFree walkedFor after the walk: ok %v rechecked %v, want the walk (and the link it meets)", ok, rechecked)
	}
	if real, _, err := evalExisting(d, true); err != nil || real != filepath.Join(dir, "d-moved", "f.txt") {
		t.Fatalf("evalExisting through the link = %s, %v", real, err)
	}
}

// TestWalkedPathsAreBounded: the paths remembered never pass maxWalked.
func TestWalkedPathsAreBounded(t *testing.T) {
	dir := t.TempDir()
	walkedFile(t, dir, "first")
	for i := range maxWalked + 10 {
		var stx unix.Statx_t
		stx.Mask = walkedMask
		stx.Btime.Sec, stx.Ino = 1, uint64(i+1)
		walked.remember(filepath.Join(dir, "n", strconv.Itoa(i)), &stx, false)
		walked.mu.Lock()
		n := len(walked.m)
		walked.mu.Unlock()
		if n > maxWalked {
			t.Fatalf("%d paths remembered, bound %d", n, maxWalked)
		}
	}
}
