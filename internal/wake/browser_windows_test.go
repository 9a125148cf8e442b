//go:build windows

package wake

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindBrowserStandardLocations: Edge and Chrome are found where their
// installers put them (per machine or per user), Edge first.
func TestFindBrowserStandardLocations(t *testing.T) {
	pf, pf86, local := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("ProgramFiles", pf)
	t.Setenv("ProgramFiles(x86)", pf86)
	t.Setenv("LOCALAPPDATA", local)
	put := func(path string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x"), 0o700); err != nil {
			t.Fatal(err)
		}
		return path
	}
	find := func() string {
		t.Helper()
		got, err := FindBrowser("")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	chromeUser := put(filepath.Join(local, `Google\Chrome\Application\chrome.exe`))
	if got := find(); got != chromeUser {
		t.Fatalf("per-user Chrome: found %q", got)
	}
	chrome := put(filepath.Join(pf, `Google\Chrome\Application\chrome.exe`))
	if got := find(); got != chrome {
		t.Fatalf("Chrome in Program Files: found %q", got)
	}
	edge := put(filepath.Join(pf86, `Microsoft\Edge\Application\msedge.exe`))
	if got := find(); got != edge {
		t.Fatalf("Edge beside Chrome: found %q, want Edge", got)
	}
}
