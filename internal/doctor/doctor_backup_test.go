package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/backup"
	"github.com/hearth-dev/hearth/internal/store"
)

// TestDoctorBackupCheck: doctor names the newest verified backup, skips
// one whose bytes changed since (and says so), warns when there is none
// or it is old, and tells the owner of a damaged database which one to
// restore.
func TestDoctorBackupCheck(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run := func() (string, *doctor) {
		var out strings.Builder
		d := &doctor{out: &out, dataDir: home, homeExists: true}
		d.checkBackups()
		return out.String(), d
	}
	if out, d := run(); !strings.HasPrefix(out, "warn  backups: no verified backup in ") || d.warns != 1 {
		t.Fatalf("no backups: %q", out)
	}
	if !strings.Contains((&doctor{dataDir: home}).restoreAdvice(), "there is no verified one") {
		t.Fatal("restore advice without a backup")
	}
	now := time.Now()
	var made []backup.Info
	for i, at := range []time.Time{now.Add(-2 * time.Hour), now.Add(-time.Hour)} {
		clock := at
		info, err := backup.Make(ctx, db, backup.Options{Dir: backup.Dir(home), Keep: 7, Reason: []string{backup.ReasonDaily, backup.ReasonManual}[i], Now: func() time.Time { return clock }})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, info)
	}
	out, d := run()
	if !strings.HasPrefix(out, "ok    backups: newest verified backup "+made[1].Path+" (made ") || !strings.Contains(out, "manual") || d.warns != 0 {
		t.Fatalf("two backups: %q", out)
	}
	if adv := (&doctor{dataDir: home}).restoreAdvice(); !strings.Contains(adv, "hearth-tray restore "+made[1].File) {
		t.Fatalf("restore advice: %q", adv)
	}
	// The newest changed on disk: the one before it is the newest verified.
	f, err := os.OpenFile(made[1].Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	f.Close()
	out, _ = run()
	if !strings.Contains(out, "warn  backups: "+made[1].Path+" has changed since it was verified") || !strings.Contains(out, "ok    backups: newest verified backup "+made[0].Path) {
		t.Fatalf("a changed newest backup: %q", out)
	}
	if adv := (&doctor{dataDir: home}).restoreAdvice(); !strings.Contains(adv, made[0].File) {
		t.Fatalf("restore advice with a changed newest backup: %q", adv)
	}
	// Only an old backup: the daily one has not run.
	old := now.Add(-3 * backup.DailyEvery)
	stale := t.TempDir()
	staleHome := &doctor{dataDir: stale, homeExists: true}
	if _, err := backup.Make(ctx, db, backup.Options{Dir: backup.Dir(stale), Reason: backup.ReasonDaily, Now: func() time.Time { return old }}); err != nil {
		t.Fatal(err)
	}
	var so strings.Builder
	staleHome.out = &so
	staleHome.checkBackups()
	if !strings.HasPrefix(so.String(), "warn  backups: ") || !strings.Contains(so.String(), "3 days old") {
		t.Fatalf("an old backup: %q", so.String())
	}
}
