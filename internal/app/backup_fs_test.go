package app_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/backup"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestBackupsDeniedToFS: the backups directory lies inside the data
// directory, so even with the data directory under an fs root the model
// can neither read a backup, list the directory, find it by search nor
// write a file there that a restore could be pointed at.
func TestBackupsDeniedToFS(t *testing.T) {
	parent := t.TempDir()
	home := filepath.Join(parent, "data")
	in := hearthtest.StartHome(t, home, func(c *config.Config) {
		hearthtest.Trusted(c)
		c.Roots = []string{parent}
	})
	var info backup.Info
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, ok, err := in.App.LastBackup()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			info = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no daily backup within a minute of the start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	dir := backup.Dir(home)
	if filepath.Dir(info.Path) != dir {
		t.Fatalf("the backup %s is not in %s", info.Path, dir)
	}
	c := hearthtest.Connect(t, in.URL, "backups-denied")
	for _, args := range []map[string]any{
		{"operation": "read", "path": info.Path},
		{"operation": "list", "path": dir},
		{"operation": "write", "path": filepath.Join(dir, "planted.db"), "data": "x", "expected_sha256": nil},
	} {
		r := c.Call("fs", args)
		if r.Get("error.code") != "outside_roots" || r.Get("error.details.rule") != "denied_directory" {
			t.Errorf("fs.%s in the backups directory: %s", args["operation"], r.Raw)
		}
	}
	r := c.Call("fs", map[string]any{"operation": "search", "path": parent, "query": "hearth-"})
	if r.State() != "completed" || strings.Contains(string(r.Raw), info.File) {
		t.Errorf("fs.search found the backup: %s", r.Raw)
	}
}
