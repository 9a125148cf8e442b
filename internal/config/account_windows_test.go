package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// profileUser is the Windows user name the test's account must have
// (HEARTH_WINE_PROFILE, set by scripts/test-windows for its prefix of the
// user "Zoë Ünal" whose Documents and Desktop are moved into OneDrive),
// or "" to take the account as it is. When set, the test first checks
// that the account really is that one, so a plain profile cannot pass
// for it.
func profileUser(t *testing.T) string {
	t.Helper()
	want := os.Getenv("HEARTH_WINE_PROFILE")
	if want == "" {
		return ""
	}
	home, err := windows.KnownFolderPath(windows.FOLDERID_Profile, 0)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(home) != want || os.Getenv("USERNAME") != want {
		t.Fatalf("this account is %q with the profile %s, want the user %q", os.Getenv("USERNAME"), home, want)
	}
	return want
}

func knownFolder(t *testing.T, id *windows.KNOWNFOLDERID) string {
	t.Helper()
	p, err := windows.KnownFolderPath(id, windows.KF_FLAG_DONT_VERIFY)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAccountFolders: for the account the test runs as (under Wine in
// CI: "Zoë Ünal", Documents and Desktop in OneDrive, Downloads off the
// profile), the data directory is the known Local AppData folder's
// Hearth (its accented path kept exactly, and writable), and the default
// roots are the profile plus every moved known folder that lies outside
// it, so each of Documents, Desktop, Downloads and Pictures is under a
// root.
func TestAccountFolders(t *testing.T) {
	user := profileUser(t)
	t.Setenv("HEARTH_HOME", "")
	local := knownFolder(t, windows.FOLDERID_LocalAppData)
	dir, err := DataDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(local, "Hearth"); dir != want {
		t.Fatalf("DataDir = %q, want %q (the known Local AppData folder)", dir, want)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	probe, err := os.CreateTemp(dir, "profile-test-*")
	if err != nil {
		t.Fatalf("write in the data directory %s: %v", dir, err)
	}
	probe.Close()
	if err := os.Remove(probe.Name()); err != nil {
		t.Fatal(err)
	}

	home := knownFolder(t, windows.FOLDERID_Profile)
	docs, desk := knownFolder(t, windows.FOLDERID_Documents), knownFolder(t, windows.FOLDERID_Desktop)
	down := knownFolder(t, windows.FOLDERID_Downloads)
	if user != "" {
		if !strings.Contains(dir, user) {
			t.Errorf("DataDir %q is not in %s's profile", dir, user)
		}
		for _, moved := range []string{docs, desk} {
			if !strings.Contains(moved, `\OneDrive`) {
				t.Errorf("known folder %s is not in OneDrive: this prefix lacks the moved folders", moved)
			}
		}
		if strings.HasPrefix(down, home+`\`) {
			t.Errorf("Downloads %s is under the profile: this prefix lacks the folder moved off it", down)
		}
	}
	roots := Default().Roots
	if len(roots) == 0 || roots[0] != home {
		t.Fatalf("default roots %q do not start with the profile %s", roots, home)
	}
	for _, k := range []string{docs, desk, down, knownFolder(t, windows.FOLDERID_Pictures)} {
		covered := false
		for _, r := range roots {
			if rel, err := filepath.Rel(r, k); err == nil && !strings.HasPrefix(rel, "..") {
				covered = true
			}
		}
		if !covered {
			t.Errorf("known folder %s is under none of the default roots %q", k, roots)
		}
	}
	if user != "" && !slices.Contains(roots, down) {
		t.Errorf("the default roots %q lack Downloads moved to %s", roots, down)
	}

	// Started with a bare environment (no %LOCALAPPDATA%, no
	// %USERPROFILE%), Hearth still finds the same folders.
	t.Setenv("LOCALAPPDATA", "")
	t.Setenv("USERPROFILE", "")
	if bare, err := DataDir(); err != nil || bare != dir {
		t.Errorf("DataDir without LOCALAPPDATA = %q, %v; want %q", bare, err, dir)
	}
	if bare := Default().Roots; !slices.Equal(bare, roots) {
		t.Errorf("default roots without USERPROFILE = %q, want %q", bare, roots)
	}
}
