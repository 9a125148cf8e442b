package app

import (
	"fmt"
	"path/filepath"

	"github.com/hearth-dev/hearth/internal/backup"
	"github.com/hearth-dev/hearth/internal/store"
)

// DamagedError is Start's answer when SQLite finds hearth.db damaged
// (store.IsDamaged): what happened, the newest verified backup to restore
// (when there is one) and the one action that does it. The damaged file is
// left as it is: `hearth-tray restore` moves it aside into
// backups/replaced-<time>/ and never deletes it.
type DamagedError struct {
	// DB is the damaged database file.
	DB string
	// Err is SQLite's error, as it came.
	Err error
	// Backup is the newest verified backup whose bytes are still those
	// that were verified; HasBackup is false when there is none, and
	// BackupErr says why the backups could not be read.
	Backup    backup.Info
	HasBackup bool
	BackupErr error
}

// What says what happened, in plain words.
func (e *DamagedError) What() string {
	return "Hearth's database (" + filepath.Base(e.DB) + ") is damaged, so Hearth cannot start. Your files are not affected; the database holds Hearth's own records (permits, tasks, the ledger)."
}

// BackupLine names the newest verified backup and when it was made, or
// says there is none.
func (e *DamagedError) BackupLine() string {
	if !e.HasBackup {
		return "There is no verified backup in " + backup.Dir(filepath.Dir(e.DB)) + " to restore."
	}
	return fmt.Sprintf("The newest verified backup is %s, made %s.", e.Backup.File, e.Backup.Made.Local().Format("2006-01-02 15:04"))
}

// RestoreCommand is the exact command that restores the newest verified
// backup ("" when there is none).
func (e *DamagedError) RestoreCommand() string {
	if !e.HasBackup {
		return ""
	}
	return "hearth-tray restore " + e.Backup.File
}

// Error is the headless answer: what happened, the backup, and the
// command to run.
func (e *DamagedError) Error() string {
	s := e.What() + " " + e.BackupLine()
	if e.HasBackup {
		s += " To restore it, run: " + e.RestoreCommand() + " (the damaged database is kept aside in " + filepath.Join(backup.DirName, "replaced-<time>") + ", never deleted), then start Hearth again."
	} else {
		s += " Move " + e.DB + " aside (keep it) and start Hearth again to begin with an empty database."
	}
	return s + " (SQLite: " + e.Err.Error() + ")"
}

func (e *DamagedError) Unwrap() error { return e.Err }

// asDamaged turns an error that says hearth.db is damaged into a
// *DamagedError naming the newest verified backup of dataDir; any other
// error is returned as it is.
func asDamaged(dataDir string, err error) error {
	if err == nil || !store.IsDamaged(err) {
		return err
	}
	d := &DamagedError{DB: filepath.Join(dataDir, backup.DBName), Err: err}
	d.Backup, d.HasBackup, d.BackupErr = backup.NewestIntact(backup.Dir(dataDir))
	return d
}
