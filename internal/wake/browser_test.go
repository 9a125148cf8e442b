package wake

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindBrowserOverride: wake.browser_path wins when it names a file; a
// missing path or a directory is refused naming the key.
func TestFindBrowserOverride(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "my-browser.exe")
	if err := os.WriteFile(exe, []byte("x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got, err := FindBrowser(exe); err != nil || got != exe {
		t.Fatalf("override %s: %q %v", exe, got, err)
	}
	for _, bad := range []string{filepath.Join(dir, "missing.exe"), dir} {
		if _, err := FindBrowser(bad); err == nil || !strings.Contains(err.Error(), "wake.browser_path") {
			t.Errorf("override %s: %v, want an error naming wake.browser_path", bad, err)
		}
	}
}

// TestFindBrowserNone: with no browser in the standard places the error
// says to set wake.browser_path.
func TestFindBrowserNone(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	for _, k := range []string{"ProgramFiles", "ProgramFiles(x86)", "LOCALAPPDATA"} {
		t.Setenv(k, empty)
	}
	if _, err := FindBrowser(""); !errors.Is(err, ErrNoBrowser) || !strings.Contains(err.Error(), "wake.browser_path") {
		t.Fatalf("no browser: %v", err)
	}
}
