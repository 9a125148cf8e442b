package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/doctor"
)

// doctorCmd implements `hearth-tray doctor` (internal/doctor): exit code 0
// when nothing failed and 1 otherwise (doctor.ErrFailed).
func doctorCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fset.SetOutput(stderr)
	if err := fset.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fset.NArg() > 0 {
		return usageError{fmt.Sprintf("doctor: unexpected argument %q", fset.Arg(0))}
	}
	dataDir, err := config.DataDir()
	if err != nil {
		return err
	}
	return doctor.Run(ctx, doctor.Options{Out: stdout, DataDir: dataDir, ConfigPath: config.Path(dataDir), Version: version})
}
