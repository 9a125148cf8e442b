//go:build !windows

package update

import (
	"os"
	"os/exec"
	"syscall"
)

// detach makes cmd start in a session of its own, so that it outlives the
// program that starts it (the old Hearth, which exits after the hand-over)
// and a kill of its process group reaches all it started.
func detach(cmd *exec.Cmd) func() (*exec.Cmd, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return func() (*exec.Cmd, error) { return cmd, cmd.Start() }
}

// killTree ends the process p started by detach and everything in its
// session's process group.
func killTree(p *os.Process) {
	syscall.Kill(-p.Pid, syscall.SIGKILL)
	p.Kill()
}
