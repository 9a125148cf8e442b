package fsops

import (
	"os"
	"path/filepath"
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
	attempts, err := r.WriteAtomic(path, []byte("new"), 0o600)
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
	attempts, err := r.WriteAtomic(path, []byte("new"), 0o600)
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
