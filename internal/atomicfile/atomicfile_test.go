package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// flakyRename fails with errno for the first fails calls, then renames.
func flakyRename(fails int, errno error) func(string, string) error {
	calls := 0
	return func(oldpath, newpath string) error {
		calls++
		if calls <= fails {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: errno}
		}
		return os.Rename(oldpath, newpath)
	}
}

func tempNames(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		if strings.HasPrefix(de.Name(), TempPrefix) {
			out = append(out, de.Name())
		}
	}
	return out
}

func TestWriteRetriesTransientErrors(t *testing.T) {
	for _, errno := range TransientErrnos() {
		t.Run(errno.Error(), func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			var sleeps []time.Duration
			r := Replacer{Rename: flakyRename(2, errno), Sleep: func(d time.Duration) { sleeps = append(sleeps, d) }}
			attempts, err := r.Write(target, []byte("new"), 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if attempts != 3 {
				t.Fatalf("attempts = %d, want 3", attempts)
			}
			if want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}; !equalDurations(sleeps, want) {
				t.Fatalf("backoff %v, want %v", sleeps, want)
			}
			got, _ := os.ReadFile(target)
			if string(got) != "new" {
				t.Fatalf("content %q", got)
			}
			if info, _ := os.Stat(target); info.Mode().Perm() != 0o600 && os.PathSeparator == '/' {
				t.Errorf("existing mode not kept: %v", info.Mode())
			}
			if n := tempNames(t, dir); len(n) != 0 {
				t.Fatalf("temporary files left: %v", n)
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWriteGivesUp(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	errno := TransientErrnos()[0]
	var sleeps []time.Duration
	r := Replacer{Rename: flakyRename(100, errno), Sleep: func(d time.Duration) { sleeps = append(sleeps, d) },
		BaseDelay: 100 * time.Millisecond}
	attempts, err := r.Write(target, []byte("new"), 0o644)
	if !errors.Is(err, errno) {
		t.Fatalf("err = %v, want %v", err, errno)
	}
	if attempts != 8 {
		t.Fatalf("attempts = %d, want 8", attempts)
	}
	want := []time.Duration{100, 200, 400, 500, 500, 500, 500}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !equalDurations(sleeps, want) {
		t.Fatalf("backoff %v, want %v (capped)", sleeps, want)
	}
	if got, _ := os.ReadFile(target); string(got) != "old" {
		t.Fatalf("target changed to %q", got)
	}
	if n := tempNames(t, dir); len(n) != 0 {
		t.Fatalf("temporary files left: %v", n)
	}
}

func TestWritePermanentErrorNotRetried(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.txt")
	r := Replacer{Rename: flakyRename(100, syscall.ENOENT), Sleep: func(time.Duration) { t.Fatal("slept") }}
	attempts, err := r.Write(target, []byte("new"), 0o644)
	if err == nil || attempts != 1 {
		t.Fatalf("attempts %d, err %v; want one failed attempt", attempts, err)
	}
	if _, err := os.Stat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("target created: %v", err)
	}
	if n := tempNames(t, dir); len(n) != 0 {
		t.Fatalf("temporary files left: %v", n)
	}
}

func TestWriteNewFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "new.bin")
	attempts, err := Write(target, []byte{0, 1, 2}, 0o640)
	if err != nil || attempts != 1 {
		t.Fatalf("attempts %d, err %v", attempts, err)
	}
	info, err := os.Stat(target)
	if err != nil || info.Size() != 3 {
		t.Fatalf("stat %v %v", info, err)
	}
	if os.PathSeparator == '/' && info.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", info.Mode())
	}
	if _, err := Write(filepath.Join(dir, "missing", "x"), nil, 0o644); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}

func TestRemoveFileRetries(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := 0
	r := Replacer{Sleep: func(time.Duration) {}, Remove: func(p string) error {
		calls++
		if calls == 1 {
			return &fs.PathError{Op: "remove", Path: p, Err: TransientErrnos()[0]}
		}
		return os.Remove(p)
	}}
	attempts, err := r.RemoveFile(target)
	if err != nil || attempts != 2 {
		t.Fatalf("attempts %d, err %v", attempts, err)
	}
	if _, err := os.Stat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("file still there")
	}
}

func TestCleanStaleTemps(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{TempPrefix + "1", TempPrefix + "2", "keep.txt", "x" + TempPrefix} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, TempPrefix+"dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	n, err := CleanStaleTemps(dir)
	if err != nil || n != 2 {
		t.Fatalf("removed %d, err %v; want 2", n, err)
	}
	des, _ := os.ReadDir(dir)
	if len(des) != 3 {
		t.Fatalf("left %d entries, want keep.txt, x%s and the directory", len(des), TempPrefix)
	}
	if n, err := CleanStaleTemps(filepath.Join(dir, "missing")); n != 0 || err != nil {
		t.Fatalf("missing dir: %d, %v", n, err)
	}
}

// TestWriteWithFailedFillLeavesTheFile: what fill writes replaces the
// file only when fill succeeds; a failed fill leaves the old content and
// no temporary file.
func TestWriteWithFailedFillLeavesTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "export.bundle")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("export failed half-way")
	err := WriteWith(path, 0o600, func(w io.Writer) error {
		if _, err := w.Write([]byte("half")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteWith = %v, want the fill's error", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("a failed fill changed the file to %q", b)
	}
	if n := tempNames(t, dir); len(n) != 0 {
		t.Fatalf("a failed fill left temporary files: %v", n)
	}
	if err := WriteWith(path, 0o600, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("WriteWith wrote %q", b)
	}
}

// TestPrivateResetsTheMode: an existing file keeps its mode, unless the
// Replacer is Private (secrets and config.json stay 0600 whatever mode
// someone gave them).
func TestPrivateResetsTheMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows files have no Unix mode bits")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	fill := func(w io.Writer) error { _, err := w.Write([]byte("{}")); return err }
	for _, c := range []struct {
		r    Replacer
		want fs.FileMode
	}{{Replacer{}, 0o644}, {Replacer{Private: true}, 0o600}} {
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := c.r.WriteWith(path, 0o600, fill); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != c.want {
			t.Errorf("Private=%v: mode %04o, want %04o", c.r.Private, fi.Mode().Perm(), c.want)
		}
	}
}
