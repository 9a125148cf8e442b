package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hearth-dev/hearth/internal/autostart"
	"github.com/hearth-dev/hearth/internal/config"
)

// startedByEnv marks a tray started by ensure (the logon task): such a
// tray shows no dialog, and when it finds Hearth already running it opens
// nothing, since nobody is waiting for it at the screen.
const startedByEnv = "HEARTH_STARTED_BY"

// ensureCmd is the Task Scheduler's action: start the tray detached unless
// Hearth already runs for this user and data directory; exit 0 either way.
func ensureCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ensure", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// --home is how the selftest's copy of the logon task points ensure at
	// its temporary data directory: Task Scheduler sets no environment.
	home := fs.String("home", "", "ensure the Hearth of this data `DIR` (default: HEARTH_HOME, else the usual one)")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("ensure: unexpected argument %q", fs.Arg(0))}
	}
	env := append(os.Environ(), startedByEnv+"=ensure")
	var dataDir string
	if *home != "" {
		abs, err := filepath.Abs(*home)
		if err != nil {
			return usageError{fmt.Sprintf("ensure: --home %q: %v", *home, err)}
		}
		// The tray it starts reads the same directory and its config.
		dataDir = abs
		env = append(env, "HEARTH_HOME="+abs, "HEARTH_CONFIG="+filepath.Join(abs, "config.json"))
	} else {
		var err error
		if dataDir, err = config.DataDir(); err != nil {
			return err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("ensure: find this program: %w", err)
	}
	res, err := autostart.Ensure(ctx, autostart.EnsureOptions{
		DataDir: dataDir, Exe: exe, Env: env,
	})
	if err != nil {
		return fmt.Errorf("ensure: %w", err)
	}
	switch res.Outcome {
	case autostart.Running:
		fmt.Fprintf(stdout, "Hearth is already running (pid %d)\n", res.PID)
	case autostart.Starting:
		fmt.Fprintln(stdout, "Hearth is being started by another ensure")
	case autostart.Started:
		fmt.Fprintf(stdout, "Started Hearth (pid %d)\n", res.PID)
	}
	return nil
}
