package config

import (
	"path/filepath"
	"slices"
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
	got := outsideHome(home, known)
	want := []string{filepath.Join(oneDrive, "Documents"), filepath.Join(base, "Users", "Zoë Ünal2", "Downloads")}
	if !slices.Equal(got, want) {
		t.Fatalf("outsideHome = %q, want %q", got, want)
	}
}
