//go:build !linux

package proc

import (
	"context"
	"os/exec"
)

// startCmd starts cmd unless ctx has already ended. Only Linux has a
// parent-death signal; on Windows the Job Object's kill-on-close does that
// work, and other Unix systems leave a child of a killed Hearth running.
func startCmd(ctx context.Context, cmd *exec.Cmd) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return cmd.Start()
}
