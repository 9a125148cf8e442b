package winconsole

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// TestRebind exercises the handle logic with a file standing in for the
// console device: a missing standard handle is replaced, a valid one is
// left alone. (Whether a console exists to attach to depends on how the
// tests are run, so the device itself is not under test here.)
func TestRebind(t *testing.T) {
	orig, err := windows.GetStdHandle(windows.STD_ERROR_HANDLE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { windows.SetStdHandle(windows.STD_ERROR_HANDLE, orig) })

	device := filepath.Join(t.TempDir(), "fake-console")
	if err := os.WriteFile(device, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	var kept *os.File
	rebind(windows.STD_ERROR_HANDLE, device, windows.GENERIC_WRITE, &kept)
	if kept != nil {
		t.Fatal("rebind replaced a valid standard handle")
	}

	if err := windows.SetStdHandle(windows.STD_ERROR_HANDLE, 0); err != nil {
		t.Fatal(err)
	}
	var f *os.File
	rebind(windows.STD_ERROR_HANDLE, device, windows.GENERIC_WRITE, &f)
	if f == nil {
		t.Fatal("rebind left a missing standard handle missing")
	}
	defer f.Close()
	h, err := windows.GetStdHandle(windows.STD_ERROR_HANDLE)
	if err != nil || h != windows.Handle(f.Fd()) {
		t.Fatalf("process standard handle = %v, %v; want the new handle %v", h, err, f.Fd())
	}
	if _, err := f.WriteString("through the new handle\n"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(device)
	if err != nil || string(b) != "through the new handle\n" {
		t.Fatalf("device content = %q, %v", b, err)
	}
}
