package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// openWithoutShareDelete holds path open the way many Windows programs do
// (an editor, an indexer, an antivirus scan): without FILE_SHARE_DELETE,
// so replacing the file by rename fails until the handle is closed.
func openWithoutShareDelete(t *testing.T, path string) windows.Handle {
	t.Helper()
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestReplaceRetriesWhileFileHeldOpen: a real sharing conflict (no mocked
// rename) is retried with backoff; once the holder lets go the replace
// succeeds and reports how many attempts it took.
func TestReplaceRetriesWhileFileHeldOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.txt")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := openWithoutShareDelete(t, path)
	released := false
	r := Replacer{Sleep: func(d time.Duration) {
		if !released {
			released = true
			windows.CloseHandle(h)
		}
	}}
	attempts, err := r.Write(path, []byte("new"), 0o600)
	if !released {
		windows.CloseHandle(h)
		t.Skip("this Windows (or Wine) let the rename replace a file held open without FILE_SHARE_DELETE")
	}
	if err != nil {
		t.Fatalf("replace after the holder closed: %v", err)
	}
	if attempts < 2 {
		t.Fatalf("attempts = %d, want a retry", attempts)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("content %q", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

// TestReplaceGivesUpWhileFileStaysHeld: a holder that never lets go makes
// the replace fail after the bounded attempts, leaving the old content and
// no temporary file.
func TestReplaceGivesUpWhileFileStaysHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.txt")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := openWithoutShareDelete(t, path)
	defer windows.CloseHandle(h)
	r := Replacer{MaxAttempts: 3, Sleep: func(time.Duration) {}}
	attempts, err := r.Write(path, []byte("new"), 0o600)
	if err == nil {
		t.Skip("this Windows (or Wine) let the rename replace a file held open without FILE_SHARE_DELETE")
	}
	if attempts != 3 {
		t.Fatalf("attempts = %d, want 3", attempts)
	}
	windows.CloseHandle(h)
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("content %q after a failed replace", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

// TestReplaceFileWritesThrough: the default rename is MoveFileEx with
// MOVEFILE_WRITE_THROUGH (the Windows stand-in for syncing the directory),
// and it replaces an existing file.
func TestReplaceFileWritesThrough(t *testing.T) {
	if replaceFlags&windows.MOVEFILE_WRITE_THROUGH == 0 || replaceFlags&windows.MOVEFILE_REPLACE_EXISTING == 0 {
		t.Fatalf("replaceFlags = %#x, want MOVEFILE_REPLACE_EXISTING|MOVEFILE_WRITE_THROUGH", replaceFlags)
	}
	dir := t.TempDir()
	old, path := filepath.Join(dir, "new.txt"), filepath.Join(dir, "target.txt")
	if err := os.WriteFile(old, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := replaceFile(old, path); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("content %q", b)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatalf("the source still exists: %v", err)
	}
	err := replaceFile(old, path)
	var le *os.LinkError
	if !errors.As(err, &le) || !os.IsNotExist(err) {
		t.Fatalf("rename of a missing file: %v, want an *os.LinkError for a missing file", err)
	}
}

// TestReplaceLongPath: a replace deeper than MAX_PATH works, as it does
// with the os package (replaceFile adds the \\?\ prefix itself). Wine
// does not enforce MAX_PATH, so there ExtendedLength's cases below are
// what fails if the prefix is dropped.
func TestReplaceLongPath(t *testing.T) {
	long := `C:\` + strings.Repeat(`d\`, 130) + "f.txt"
	for in, want := range map[string]string{
		`C:\short\f.txt`:          `C:\short\f.txt`,
		long:                      `\\?\` + long,
		long + `\.\x`:             `\\?\` + long + `\x`,
		`\\?\` + long:             `\\?\` + long,
		`\\srv\share\` + long[3:]: `\\?\UNC\srv\share\` + long[3:],
		`\\srv\share\f.txt`:       `\\srv\share\f.txt`,
		`\\.\` + long:             `\\.\` + long,
		long[2:]:                  long[2:],
	} {
		if got := ExtendedLength(in); got != want {
			t.Errorf("ExtendedLength(%q) = %q, want %q", in, got, want)
		}
	}
	dir := t.TempDir()
	for len(dir) < 300 {
		dir = filepath.Join(dir, strings.Repeat("d", 40))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "long.txt")
	for _, data := range []string{"first", "second"} {
		if _, err := Write(path, []byte(data), 0o600); err != nil {
			t.Fatalf("write %q to a %d-character path: %v", data, len(path), err)
		}
		if b, _ := os.ReadFile(path); string(b) != data {
			t.Fatalf("content %q, want %q", b, data)
		}
	}
}

// TestReplaceSharingViolationIsTransient: a target held open with no
// sharing at all makes MoveFileEx fail with an error the retry treats as
// transient.
func TestReplaceSharingViolationIsTransient(t *testing.T) {
	dir := t.TempDir()
	old, path := filepath.Join(dir, "new.txt"), filepath.Join(dir, "target.txt")
	for _, p := range []string{old, path} {
		if err := os.WriteFile(p, []byte(p), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.CreateFile(name, windows.GENERIC_READ, 0, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	err = replaceFile(old, path)
	if err == nil {
		t.Skip("this Windows (or Wine) let the rename replace a file held open without sharing")
	}
	if !IsTransient(err) {
		t.Fatalf("%v (%#v) is not treated as transient", err, errors.Unwrap(err))
	}
	t.Logf("MoveFileEx over a held file: %v", err)
}
