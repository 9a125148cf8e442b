package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/selftest"
)

// selftestCmd runs the selftest: one line per check, the report saved in
// the data directory (for the control panel) and, with --report, copied to
// FILE. It exits 1 when a check FAILs.
func selftestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keep := fs.Bool("keep", false, "keep the temporary directory the checks ran in")
	out := fs.String("report", "", "also write the JSON report to `FILE`")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("selftest: unexpected argument %q", fs.Arg(0))}
	}
	dataDir, err := config.DataDir()
	if err != nil {
		return err
	}
	_, err = selftest.Run(ctx, selftest.Options{
		Stdout: stdout, DataDir: dataDir, ReportPath: *out, Keep: *keep, Version: version,
	})
	if errors.Is(err, selftest.ErrFailed) {
		return errors.New("selftest: a check FAILed (see the lines above)")
	}
	return err
}
