//go:build !windows

package main

import (
	"context"
	"io"
	"os"
)

// runTray is the no-argument entry point. The tray is Windows-only;
// elsewhere a start with no arguments is serve, headless.
func runTray(ctx context.Context, stdout, stderr io.Writer) error {
	os.Unsetenv(startedByEnv)
	return serve(ctx, nil, stdout, stderr)
}
