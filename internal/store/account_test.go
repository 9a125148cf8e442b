package store

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
)

// TestAccountDatabase: the database opens, is written and opens again
// read-only at exactly its path when that path is a person's: letters
// outside ASCII, spaces, and the characters a Windows user name may hold
// that mean something in a URI (# & % ' and parentheses), which is how
// the file name reaches SQLite. On Windows the folder is in the user's
// own data directory (under Wine in CI, that of "Zoë Ünal": see
// scripts/test-windows), so no file may land anywhere but there.
func TestAccountDatabase(t *testing.T) {
	base := t.TempDir()
	if runtime.GOOS == "windows" {
		t.Setenv("HEARTH_HOME", "")
		dataDir, err := config.DataDir()
		if err != nil {
			t.Fatal(err)
		}
		if want := os.Getenv("HEARTH_WINE_PROFILE"); want != "" && !strings.Contains(dataDir, `\`+want+`\`) {
			t.Fatalf("data directory %s is not in the profile of %q", dataDir, want)
		}
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			t.Fatal(err)
		}
		if base, err = os.MkdirTemp(dataDir, "profile-test-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(base) })
	}
	dir := filepath.Join(base, "Zoë Ünal #1 & 50% (Ωμέγα) 's")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "hearth.db")
	ctx := context.Background()
	db, err := Open(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.ExecContext(ctx, "CREATE TABLE profile_probe (v TEXT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.W.ExecContext(ctx, "INSERT INTO profile_probe VALUES (?)", dir); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the database is not at its path: %v", err)
	}
	ro, err := OpenReadOnly(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	err = ro.R.QueryRowContext(ctx, "SELECT v FROM profile_probe").Scan(&got)
	ro.Close()
	if err != nil || got != dir {
		t.Fatalf("read back %q, %v; want %q", got, err, dir)
	}
	// Nothing but the database's own files, in that folder alone.
	for _, d := range []string{base, dir} {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if d == base && e.Name() != filepath.Base(dir) || d == dir && !slices.Contains([]string{"hearth.db", "hearth.db-wal", "hearth.db-shm"}, e.Name()) {
				t.Errorf("unexpected %s in %s", e.Name(), d)
			}
		}
	}
}
