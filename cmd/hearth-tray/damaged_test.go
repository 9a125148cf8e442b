package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/backup"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// damagedHome is a data directory whose real database has a verified
// backup and then a damaged futures table; it returns the options that
// start Hearth on it and the backup.
func damagedHome(t *testing.T) (app.Options, backup.Info) {
	t.Helper()
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.Roots = []string{t.TempDir()} })
	o := app.Options{DataDir: home, ConfigPath: filepath.Join(home, "config.json"), MCPAddr: "127.0.0.1:0", PanelAddr: "127.0.0.1:0", Version: "test", Instance: true, BackupEvery: -1}
	h, err := app.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	info, err := h.Backup(context.Background(), backup.ReasonManual)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	hearthtest.DamageTable(t, filepath.Join(home, backup.DBName), "futures")
	return o, info
}

// TestTrayRestoreDialogLogic: the tray's answer to a damaged database,
// with the Win32 dialog replaced by a fake: the prompt names the newest
// verified backup and offers Restore; Cancel changes nothing; Restore puts
// the backup in place, keeps the damaged file aside, and Hearth starts.
func TestTrayRestoreDialogLogic(t *testing.T) {
	o, info := damagedHome(t)
	ctx := context.Background()
	_, err := app.Start(ctx, o)
	var damaged *app.DamagedError
	if !errors.As(err, &damaged) {
		t.Fatalf("start: %v, want a DamagedError", err)
	}
	db := filepath.Join(o.DataDir, backup.DBName)
	before, _ := os.ReadFile(db)

	var shown []restorePrompt
	fakeAsk := func(answer bool) func(restorePrompt) (bool, error) {
		return func(p restorePrompt) (bool, error) { shown = append(shown, p); return answer, nil }
	}
	restored, err := offerRestore(ctx, o.DataDir, damaged, fakeAsk(false))
	if err != nil || restored {
		t.Fatalf("cancelled: restored %v, %v", restored, err)
	}
	if after, _ := os.ReadFile(db); string(after) != string(before) {
		t.Fatal("Cancel changed the database")
	}
	p := shown[0]
	if !p.CanRestore || p.Instruction != "Hearth's database is damaged" || !strings.Contains(p.Content, info.File) ||
		!strings.Contains(p.Content, "Restore puts that backup in place") || !strings.Contains(p.Content, "never deleted") ||
		p.Command != "hearth-tray restore "+info.File || !strings.Contains(p.Details, "malformed") {
		t.Fatalf("prompt %+v", p)
	}

	restored, err = offerRestore(ctx, o.DataDir, damaged, fakeAsk(true))
	if err != nil || !restored {
		t.Fatalf("restore: %v %v", restored, err)
	}
	asides, _ := filepath.Glob(filepath.Join(backup.Dir(o.DataDir), "replaced-*", backup.DBName))
	if len(asides) != 1 {
		t.Fatalf("damaged database kept aside: %v", asides)
	}
	if kept, _ := os.ReadFile(asides[0]); string(kept) != string(before) {
		t.Fatal("the file kept aside is not the damaged database")
	}
	h, err := app.Start(ctx, o)
	if err != nil {
		t.Fatalf("start after Restore: %v", err)
	}
	h.Stop()
}

// TestTrayRestoreDialogWithoutBackup: nothing to restore: the prompt says
// so with OK only, and whatever is answered nothing is restored.
func TestTrayRestoreDialogWithoutBackup(t *testing.T) {
	o, info := damagedHome(t)
	if err := os.Remove(info.Path + ".json"); err != nil {
		t.Fatal(err)
	}
	_, err := app.Start(context.Background(), o)
	var damaged *app.DamagedError
	if !errors.As(err, &damaged) {
		t.Fatalf("start: %v", err)
	}
	var p restorePrompt
	restored, err := offerRestore(context.Background(), o.DataDir, damaged, func(q restorePrompt) (bool, error) { p = q; return true, nil })
	if err != nil || restored || p.CanRestore || p.Command != "" || !strings.Contains(p.Content, "no verified backup") {
		t.Fatalf("restored %v (%v), prompt %+v", restored, err, p)
	}
}
