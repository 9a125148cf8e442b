package update

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// detach makes cmd start with no console, in a process group of its own,
// and outside the starting program's Job Object when that job allows it
// (a job that kills its members when it ends would otherwise take the new
// Hearth along with the old one); a job that forbids breaking away refuses
// with access denied, and the start is repeated inside it.
func detach(cmd *exec.Cmd) func() (*exec.Cmd, error) {
	const flags = windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP
	return func() (*exec.Cmd, error) {
		cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: flags | windows.CREATE_BREAKAWAY_FROM_JOB}
		err := cmd.Start()
		if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			again := exec.Command(cmd.Path, cmd.Args[1:]...)
			again.Env, again.Dir, again.Stdout, again.Stderr = cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr
			again.SysProcAttr = &syscall.SysProcAttr{CreationFlags: flags}
			return again, again.Start()
		}
		return cmd, err
	}
}

// killTree ends the process p started by detach. A new Hearth that failed
// its health check has started nothing of its own yet that outlives it:
// its tunnel-client runs in a Job Object that ends with it.
func killTree(p *os.Process) {
	p.Kill()
}
