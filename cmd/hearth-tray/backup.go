package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/backup"
	"github.com/hearth-dev/hearth/internal/config"
)

// backupCmd implements `hearth-tray backup [--list]`: a verified backup of
// hearth.db now, as the daily one (it reads the database through a
// read-only connection, so it works while Hearth runs), or the list of
// verified backups.
func backupCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("backup", flag.ContinueOnError)
	fset.SetOutput(stderr)
	list := fset.Bool("list", false, "list the verified backups, newest first")
	if err := fset.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fset.NArg() > 0 {
		return usageError{fmt.Sprintf("backup: unexpected argument %q", fset.Arg(0))}
	}
	dataDir, err := config.DataDir()
	if err != nil {
		return err
	}
	dir := backup.Dir(dataDir)
	if *list {
		all, err := backup.List(dir)
		if err != nil {
			return err
		}
		if len(all) == 0 {
			fmt.Fprintf(stdout, "No backups in %s yet.\n", dir)
			return nil
		}
		for _, info := range all {
			fmt.Fprintf(stdout, "%s  %s  %-9s  %d ledger entries, %s\n", info.File, info.Made.Local().Format("2006-01-02 15:04"), info.Reason, info.LedgerEntries, sizeText(info.Size))
		}
		return nil
	}
	cfg, err := readConfig(dataDir)
	if err != nil {
		return err
	}
	vkey, err := app.VerifierKey(dataDir)
	if err != nil {
		return err
	}
	info, err := backup.MakeFromFile(ctx, filepath.Join(dataDir, backup.DBName), backup.Options{
		Dir: dir, Keep: cfg.BackupKeep, Reason: backup.ReasonManual, VerifierKey: vkey,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Backed up and verified: %s (%d ledger entries, %s, %d ms)\n", info.Path, info.LedgerEntries, sizeText(info.Size), info.TookMS)
	return nil
}

// restoreCmd implements `hearth-tray restore FILE`: FILE (a path, or the
// name of a backup in the backups directory) replaces hearth.db once it
// verifies; the replaced database is kept aside. Hearth must not run.
func restoreCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("restore", flag.ContinueOnError)
	fset.SetOutput(stderr)
	if err := fset.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fset.NArg() != 1 {
		return usageError{"restore: want one backup file (see hearth-tray backup --list)"}
	}
	dataDir, err := config.DataDir()
	if err != nil {
		return err
	}
	file := fset.Arg(0)
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(file, `/\`) {
		// A bare name, as backup --list prints it.
		file = filepath.Join(backup.Dir(dataDir), file)
	}
	vkey, err := app.VerifierKey(dataDir)
	if err != nil {
		return err
	}
	res, err := backup.Restore(ctx, dataDir, file, vkey, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Restored %s: %d ledger entries verify, schema version %d.\n", res.Backup.Path, res.Backup.LedgerEntries, res.Backup.SchemaVersion)
	if res.Aside != "" {
		fmt.Fprintf(stdout, "The database it replaced is kept in %s.\n", res.Aside)
	}
	fmt.Fprintln(stdout, "Start Hearth again to use it.")
	return nil
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
