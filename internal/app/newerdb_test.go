package app_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/store"
)

// TestStartRefusesADatabaseFromANewerHearth: a database whose schema is
// newer than this program knows (a newer Hearth wrote it, and the user
// went back to an older program) is refused at start with a plain
// message saying what to do, not opened, not called damaged, and left as
// it was.
func TestStartRefusesADatabaseFromANewerHearth(t *testing.T) {
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, nil)
	ctx := context.Background()
	dbPath := filepath.Join(home, "hearth.db")
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("PRAGMA user_version = 9999"); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	_, err = app.Start(ctx, app.Options{DataDir: home, ConfigPath: filepath.Join(home, "config.json"), MCPAddr: "127.0.0.1:0", PanelAddr: "127.0.0.1:0", Version: "test", Instance: true})
	var newer *store.NewerError
	if !errors.As(err, &newer) || newer.Schema != 9999 {
		t.Fatalf("start: %v", err)
	}
	var damaged *app.DamagedError
	if errors.As(err, &damaged) {
		t.Fatalf("called damaged: %v", err)
	}
	if !strings.Contains(err.Error(), "written by a newer version of Hearth") || !strings.Contains(err.Error(), "install the newer version again") {
		t.Fatalf("not plain: %v", err)
	}
	raw, _ = sql.Open("sqlite", dbPath)
	defer raw.Close()
	var v int
	if err := raw.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != 9999 {
		t.Fatalf("the database was changed: %d %v", v, err)
	}
}
