package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/backup"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/periodic"
	"github.com/hearth-dev/hearth/internal/secrets"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/web/status"
)

// BackupCheckEvery is how often a running Hearth asks whether the daily
// backup is due (backup.Due: the newest is a day old). Asking often rather
// than sleeping a day makes a Hearth that runs for weeks, or one restarted
// every few hours, back up once a day all the same.
const BackupCheckEvery = time.Hour

// VerifierKey is the ledger verifier key of dataDir's signing key
// (ledger.key), loaded and never created; "" when there is none yet.
func VerifierKey(dataDir string) (string, error) {
	keyFile := filepath.Join(dataDir, "ledger.key")
	skey, found, err := secrets.ProtectedFileKeyStore{Path: keyFile}.Load()
	if err != nil || !found {
		return "", err
	}
	vkey, err := ledger.VerifierKey(strings.TrimSpace(string(skey)))
	if err != nil {
		return "", fmt.Errorf("ledger signing key %s: %w", keyFile, err)
	}
	return vkey, nil
}

// migrationBackup is the store option that backs the database up, verified,
// before a migration changes it; a backup that fails stops the start, so
// no migration runs without a copy to go back to.
func migrationBackup(dataDir string, keep int, log *slog.Logger) store.Option {
	return store.BeforeMigrate(func(ctx context.Context, db *store.DB, from, to int) error {
		vkey, err := VerifierKey(dataDir)
		if err != nil {
			return err
		}
		info, err := backup.Make(ctx, db, backup.Options{Dir: backup.Dir(dataDir), Keep: keep, Reason: backup.ReasonMigration, VerifierKey: vkey})
		if err != nil {
			return err
		}
		log.Info("backed up the database before migrating it", "file", info.File, "from", from, "to", to, "took_ms", info.TookMS)
		return nil
	})
}

// Backup makes a verified backup of the live database now, keeping
// backup_keep of them.
func (a *App) Backup(ctx context.Context, reason string) (backup.Info, error) {
	return backup.Make(ctx, a.DB, backup.Options{
		Dir: backup.Dir(a.DataDir), Keep: a.Config.BackupKeep, Reason: reason, VerifierKey: a.Ledger.PublicKey(),
	})
}

// LastBackup is the newest verified backup, for the panel; ok is false
// when there is none.
func (a *App) LastBackup() (info backup.Info, ok bool, err error) {
	return backup.Newest(backup.Dir(a.DataDir))
}

// startBackups makes the daily backup: at start when the newest backup is
// a day old (or there is none), then whenever it becomes so, checked every
// BackupCheckEvery (Options.BackupEvery), until ctx ends. The returned
// channel closes when it has stopped. With Options.BackupEvery negative it
// makes none.
func (a *App) startBackups(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	every := a.backupEvery
	if every < 0 {
		close(done)
		return done
	}
	if every == 0 {
		every = BackupCheckEvery
	}
	go func() {
		defer close(done)
		periodic.Run(ctx, every, true, a.dailyBackup)
	}()
	return done
}

func (a *App) dailyBackup(ctx context.Context) {
	due, err := backup.Due(backup.Dir(a.DataDir), time.Now())
	if err != nil {
		a.Log.Error("daily backup: read the backups directory", "err", err)
		return
	}
	if !due {
		return
	}
	info, err := a.Backup(ctx, backup.ReasonDaily)
	switch {
	case err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled)):
	case err != nil:
		a.Log.Error("daily backup", "err", err)
	default:
		a.Log.Info("daily backup made", "file", info.File, "ledger_entries", info.LedgerEntries, "took_ms", info.TookMS)
	}
}

// lastBackupLine is the Status page's "Last backup" line.
func (a *App) lastBackupLine() status.Backup {
	info, ok, err := a.LastBackup()
	if err != nil {
		a.Log.Warn("status page: read the backups directory", "err", err)
	}
	if !ok {
		return status.Backup{}
	}
	return status.Backup{Known: true, Made: info.Made, Reason: info.Reason}
}
