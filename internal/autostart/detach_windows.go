package autostart

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// startDetached starts exe (no arguments) with no console
// (DETACHED_PROCESS) in a process group of its own
// (CREATE_NEW_PROCESS_GROUP, so a Ctrl+C or Ctrl+Break in the caller's
// console does not reach it), its standard streams the null device. env
// nil inherits this process's environment.
//
// It first asks to break away from the caller's Job Object, so that a job
// that kills its members when it ends (a terminal tab, some task runners)
// does not take Hearth along; a job that forbids breaking away refuses
// with access denied, and then the start is repeated inside it.
func startDetached(exe string, env []string) (*exec.Cmd, error) {
	const flags = windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP
	start := func(extra uint32) (*exec.Cmd, error) {
		cmd := exec.Command(exe)
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: flags | extra}
		return cmd, cmd.Start()
	}
	cmd, err := start(windows.CREATE_BREAKAWAY_FROM_JOB)
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		cmd, err = start(0)
	}
	return cmd, err
}
