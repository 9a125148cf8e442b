//go:build !windows

package autostart

import (
	"os/exec"
	"syscall"
)

// startDetached starts exe (no arguments) in a new session, so that it has
// no controlling terminal and outlives its parent's session and process
// group; its standard streams are the null device. env nil inherits this
// process's environment.
func startDetached(exe string, env []string) (*exec.Cmd, error) {
	cmd := exec.Command(exe)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, cmd.Start()
}
