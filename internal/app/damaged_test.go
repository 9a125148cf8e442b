package app_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/backup"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// damage overwrites the b-tree pages of the database file at path after
// its first page with junk, as a failing disk or a torn copy would: the
// header still says SQLite, the tables do not read.
func damage(t *testing.T, path string) {
	t.Helper()
	const first = 1
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	if len(b) < 4*page {
		t.Fatalf("database %s is only %d bytes", path, len(b))
	}
	junk := bytes.Repeat([]byte{0xA5, 0x5A, 0x13, 0x37}, (len(b)-first*page)/4)
	copy(b[first*page:], junk)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestDamagedDatabaseNamesTheBackup: a real database with a verified
// backup, damaged on disk: Start answers a *DamagedError that says so in
// plain words, names the newest verified backup and the exact restore
// command, and leaves the damaged file as it was; restoring that backup
// (what the command does) keeps the damaged file aside and Hearth starts.
func TestDamagedDatabaseNamesTheBackup(t *testing.T) {
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.Roots = []string{t.TempDir()}; hearthtest.Trusted(c) })
	// No daily backup races the two this test makes.
	o := app.Options{DataDir: home, ConfigPath: filepath.Join(home, "config.json"), MCPAddr: "127.0.0.1:0", PanelAddr: "127.0.0.1:0", Version: "test", Instance: true, BackupEvery: -1}
	ctx := context.Background()
	h, err := app.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	c := hearthtest.Connect(t, h.MCPURL(), "damaged")
	if st, r := c.Settled("machine", map[string]any{"operation": "host_info"}); st != "completed" {
		t.Fatalf("host_info: %s %s", st, r.Raw)
	}
	c.Session.Close()
	older, err := h.Backup(ctx, backup.ReasonManual)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	newest, err := h.Backup(ctx, backup.ReasonManual)
	if err != nil || newest.File == older.File {
		t.Fatalf("second backup %+v: %v", newest, err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(home, backup.DBName)
	damage(t, db)
	sum := fileSum(t, db)

	_, err = app.Start(ctx, o)
	var d *app.DamagedError
	if !errors.As(err, &d) {
		t.Fatalf("start on a damaged database: %v, want a DamagedError", err)
	}
	t.Logf("start on the damaged database: %v", err)
	if !d.HasBackup || d.Backup.File != newest.File || d.RestoreCommand() != "hearth-tray restore "+newest.File {
		t.Fatalf("damaged: backup %+v (has %v), command %q; want %s", d.Backup, d.HasBackup, d.RestoreCommand(), newest.File)
	}
	msg := err.Error()
	for _, want := range []string{"is damaged", "newest verified backup is " + newest.File, "To restore it, run: hearth-tray restore " + newest.File, "never deleted"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if fileSum(t, db) != sum {
		t.Fatal("the failed start changed the damaged file")
	}

	res, err := backup.Restore(ctx, home, filepath.Join(backup.Dir(home), d.Backup.File), "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if fileSum(t, filepath.Join(res.Aside, backup.DBName)) != sum {
		t.Fatalf("the damaged database is not kept aside in %s", res.Aside)
	}
	h, err = app.Start(ctx, o)
	if err != nil {
		t.Fatalf("start after the restore: %v", err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedDatabaseWithoutBackup: no verified backup (one whose bytes
// changed since it was verified does not count): the answer says so and
// offers no restore command.
func TestDamagedDatabaseWithoutBackup(t *testing.T) {
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.Roots = []string{t.TempDir()} })
	o := app.Options{DataDir: home, ConfigPath: filepath.Join(home, "config.json"), MCPAddr: "127.0.0.1:0", PanelAddr: "127.0.0.1:0", Version: "test", Instance: true, BackupEvery: -1}
	ctx := context.Background()
	h, err := app.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	info, err := h.Backup(ctx, backup.ReasonManual)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	// The backup's bytes change after it was verified.
	if err := os.WriteFile(info.Path, []byte("SQLite format 3\x00 but not any more"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Only the futures table's pages: the database opens, and the damage
	// shows when the start recovers the previous run's futures.
	hearthtest.DamageTable(t, filepath.Join(home, backup.DBName), "futures")
	_, err = app.Start(ctx, o)
	t.Logf("start on the damaged database: %v", err)
	var d *app.DamagedError
	if !errors.As(err, &d) || d.HasBackup || d.RestoreCommand() != "" || !strings.Contains(err.Error(), "no verified backup") {
		t.Fatalf("start: %v (%+v)", err, d)
	}
}
