package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOutsideHome: a known folder moved off the home folder (Documents in
// OneDrive on another drive) becomes a default root of its own; one still
// under the home folder, one under a folder already added, and a relative
// or empty answer do not.
func TestOutsideHome(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "Users", "Zoë Ünal")
	oneDrive := filepath.Join(base, "D", "OneDrive - Zoë")
	known := []string{
		filepath.Join(home, "Desktop"),
		filepath.Join(oneDrive, "Documents"),
		filepath.Join(oneDrive, "Documents", "Pictures"),
		filepath.Join(base, "Users", "Zoë Ünal2", "Downloads"),
		"relative", "",
	}
	same := func(p string) string { return p }
	got := outsideHome(home, known, same)
	want := []string{filepath.Join(oneDrive, "Documents"), filepath.Join(base, "Users", "Zoë Ünal2", "Downloads")}
	if !slices.Equal(got, want) {
		t.Fatalf("outsideHome = %q, want %q", got, want)
	}

	// Documents written under the home but a link (a junction on
	// Windows) to another drive is a root of its own; Desktop, a link to
	// the same place, is then covered by it.
	elsewhere := filepath.Join(base, "D", "Dokumente")
	real := func(p string) string {
		for _, link := range []string{filepath.Join(home, "Documents"), filepath.Join(home, "Desktop")} {
			if rel, err := filepath.Rel(link, p); err == nil && !strings.HasPrefix(rel, "..") {
				return filepath.Join(elsewhere, rel)
			}
		}
		return p
	}
	got = outsideHome(home, []string{filepath.Join(home, "Documents"), filepath.Join(home, "Desktop"), filepath.Join(home, "Pictures")}, real)
	if want := []string{filepath.Join(home, "Documents")}; !slices.Equal(got, want) {
		t.Fatalf("outsideHome with Documents and Desktop linked to another drive = %q, want %q", got, want)
	}
}
