package main

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// installCmd installs Hearth for the current Windows user (see install in
// install_windows.go).
func installCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("install: unexpected argument %q", fs.Arg(0))}
	}
	return install(ctx, stdout)
}

// uninstallCmd removes what install made; --purge also deletes the data.
func uninstallCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("uninstall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	purge := fs.Bool("purge", false, "also delete the data directory (database, logs, config) and the stored tunnel key")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("uninstall: unexpected argument %q", fs.Arg(0))}
	}
	return uninstall(ctx, *purge, stdout)
}
