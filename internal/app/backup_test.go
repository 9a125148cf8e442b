package app_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/backup"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/store/storetest"
)

// TestServeMakesTheDailyBackup: a running Hearth with no backup yet makes
// one, verified, with the ledger it has; the panel's LastBackup sees it.
func TestServeMakesTheDailyBackup(t *testing.T) {
	in := hearthtest.Start(t, nil)
	deadline := time.Now().Add(60 * time.Second)
	for {
		info, ok, err := in.App.LastBackup()
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if info.Reason != backup.ReasonDaily {
				t.Fatalf("first backup reason = %q, want daily", info.Reason)
			}
			if _, err := backup.Verify(context.Background(), info.Path, in.App.Ledger.PublicKey()); err != nil {
				t.Fatalf("the daily backup does not verify: %v", err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no daily backup within a minute of the start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMigrationIsPrecededByABackup: opening a database of an older schema
// first backs it up as it was.
func TestMigrationIsPrecededByABackup(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.Roots = []string{t.TempDir()} })
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	old := ms[len(ms)-2].Version
	// A database as the previous Hearth left it: every migration but the
	// newest.
	storetest.AtVersion(t, filepath.Join(home, "hearth.db"), old).Close()

	a, err := app.Open(ctx, app.Options{DataDir: home, ConfigPath: filepath.Join(home, "config.json"), MCPAddr: "127.0.0.1:0", PanelAddr: "127.0.0.1:0", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	all, err := backup.List(backup.Dir(home))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Reason != backup.ReasonMigration || all[0].SchemaVersion != old || !strings.HasSuffix(all[0].File, "-migration.db") {
		t.Fatalf("backups after a migration = %+v, want one of schema %d made for the migration", all, old)
	}
	if v, err := a.DB.SchemaVersion(ctx); err != nil || v != ms[len(ms)-1].Version {
		t.Fatalf("schema after open = %d, %v", v, err)
	}
}
