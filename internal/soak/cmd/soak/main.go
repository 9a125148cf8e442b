// Command soak runs Hearth's soak suite against a real hearth-tray serve
// (scripts/soak).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"

	"github.com/hearth-dev/hearth/internal/soak"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	o := soak.Defaults()
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.StringVar(&o.Bin, "bin", "", "hearth-tray binary (default: build ./cmd/hearth-tray)")
	fs.IntVar(&o.Clients, "clients", o.Clients, "concurrent MCP clients")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "load duration (the kill -9 is at its middle)")
	fs.IntVar(&o.Stalled, "stalled", o.Stalled, "stalled bodies")
	fs.BoolVar(&o.NoKill, "no-kill", false, "skip the kill -9")
	fs.Int64Var(&o.StalledBytes, "stalled-bytes", o.StalledBytes, "declared size of each stalled body")
	writeMix := fs.Duration("write-mix", 0, "instead of the soak, run only an fs.write mix this long and report the database's size")
	budget := fs.Int64("budget", 0, "storage_budget_bytes for -write-mix (0: the default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.Bin == "" {
		dir, err := os.MkdirTemp("", "hearth-soak-bin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.Bin = filepath.Join(dir, "hearth-tray")
		build := exec.CommandContext(ctx, "go", "build", "-o", o.Bin, "./cmd/hearth-tray")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build hearth-tray: %w", err)
		}
	}
	if *writeMix > 0 {
		rep, err := soak.WriteMix(ctx, o.Bin, o.Clients, *writeMix, *budget, func(f string, a ...any) { fmt.Printf("soak: "+f+"\n", a...) })
		if err != nil {
			return err
		}
		if rep.Errors > 0 {
			return soak.ErrFailed
		}
		return nil
	}
	rep, err := soak.Run(ctx, o)
	if err != nil {
		return err
	}
	rep.Print(os.Stdout, o)
	if len(rep.Failures) > 0 {
		return soak.ErrFailed
	}
	return nil
}
