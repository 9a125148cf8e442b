package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/backup"
)

// restorePrompt is what a damaged database gets said at start, in the
// tray's dialog (askRestore) and on serve's terminal.
type restorePrompt struct {
	Title string
	// Instruction is the dialog's headline; Content says what happened,
	// the newest verified backup and what Restore does.
	Instruction, Content string
	// CanRestore: there is a verified backup, and the dialog offers a
	// Restore button (and Cancel); otherwise only OK.
	CanRestore bool
	// Command is the exact command that restores it ("" without one).
	Command string
	// Details is SQLite's own message, behind the dialog's "Details".
	Details string
}

// damagedPrompt words d for the user.
func damagedPrompt(d *app.DamagedError) restorePrompt {
	p := restorePrompt{
		Title:       "Hearth",
		Instruction: "Hearth's database is damaged",
		Details:     d.Err.Error(),
		CanRestore:  d.HasBackup,
		Command:     d.RestoreCommand(),
	}
	lines := []string{d.What(), d.BackupLine()}
	if d.HasBackup {
		lines = append(lines, "Restore puts that backup in place and starts Hearth. The damaged database is kept aside in "+backup.DirName+`\replaced-<time>, never deleted. What happened since the backup was made is not in it.`)
	} else {
		lines = append(lines, "Move "+d.DB+" aside (keep it) and start Hearth again to begin with an empty database.")
	}
	p.Content = strings.Join(lines, "\n\n")
	return p
}

// serveDamagedText is serve's answer to a damaged database: the plain
// account and the exact command.
func serveDamagedText(d *app.DamagedError) string {
	lines := []string{d.What(), d.BackupLine()}
	if d.HasBackup {
		lines = append(lines, "To restore it (the damaged database is kept aside in "+backup.DirName+"/replaced-<time>, never deleted), run:", "", "    "+d.RestoreCommand(), "", "then start Hearth again.")
	} else {
		lines = append(lines, "Move "+d.DB+" aside (keep it) and start Hearth again to begin with an empty database.")
	}
	lines = append(lines, "", "Details: "+d.Err.Error())
	return strings.Join(lines, "\n")
}

// offerRestore shows the damaged database's prompt (ask: the tray's
// dialog; tests give a fake) and, when the user chooses Restore, restores
// the newest verified backup into dataDir as `hearth-tray restore` does
// (backup.Restore: verified again first, the damaged database moved
// aside). restored reports whether it did.
func offerRestore(ctx context.Context, dataDir string, d *app.DamagedError, ask func(restorePrompt) (bool, error)) (restored bool, err error) {
	yes, err := ask(damagedPrompt(d))
	if err != nil {
		return false, fmt.Errorf("ask whether to restore the database: %w", err)
	}
	if !yes || !d.HasBackup {
		return false, nil
	}
	vkey, err := app.VerifierKey(dataDir)
	if err != nil {
		return false, err
	}
	if _, err := backup.Restore(ctx, dataDir, d.Backup.Path, vkey, time.Now()); err != nil {
		return false, fmt.Errorf("restore %s: %w", d.Backup.File, err)
	}
	return true, nil
}
