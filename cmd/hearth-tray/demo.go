package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/hearth-dev/hearth/internal/demo"
)

// demoCmd implements `demo [--out demo-report.json] [--keep]`: the
// end-to-end demonstration (docs/DESIGN.md, "The demo") on a temporary data directory. It
// fails, naming the step, unless every step held.
func demoCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", demo.DefaultOut, "report file; the evidence bundle "+demo.EvidenceName+" is written beside it")
	keep := fs.Bool("keep", false, "keep the temporary data directory and fs root")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("demo: unexpected argument %q", fs.Arg(0))}
	}
	return demo.Run(ctx, demo.Options{
		Out: *out, Keep: *keep, Version: version, Stdout: stdout,
		Log: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
}
