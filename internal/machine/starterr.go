package machine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"syscall"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/proc"
)

// killError says in Hearth's words why process pid could not be killed
// (the system's text only in details.system_error).
func killError(pid int, err error) *primitive.Error {
	var e *primitive.Error
	switch {
	case errors.Is(err, os.ErrProcessDone), errors.Is(err, syscall.ESRCH), errors.Is(err, proc.ErrNotFound):
		e = primitive.Failed("no_such_process", "machine.process_kill: there is no process %d (it may have ended already); machine.process_list shows the running ones", pid)
	case errors.Is(err, fs.ErrPermission):
		e = primitive.Failed("access_denied", "machine.process_kill: this account may not stop process %d (the system refused)", pid)
	default:
		e = primitive.Failed("kill_failed", "machine.process_kill: process %d could not be stopped; details.system_error has the system's reason", pid)
	}
	return e.WithDetails(map[string]any{"system_error": err.Error()})
}

// startError says in Hearth's words why command could not be started; the
// operating system's own text is kept only in details.system_error, for
// a person reading the log or the panel, never as the message a model
// reads (Go's `exec: "x": executable file not found in $PATH` tells a
// model nothing it can act on).
func startError(command string, err error) *primitive.Error {
	var pe *proc.InputError
	if errors.As(err, &pe) {
		// proc refused the input itself, in words of its own.
		return primitive.Failed("invalid_input", "machine.exec: %s", pe.Reason)
	}
	var e *primitive.Error
	switch {
	case errors.Is(err, exec.ErrNotFound):
		e = primitive.Failed("program_not_found", "machine.exec: program %q was not found: it is not a path to a program, and no program of that name is on the search path (PATH); give its full path or check its name", command)
	case errors.Is(err, exec.ErrDot):
		e = primitive.Failed("program_not_found", "machine.exec: program %q would be found only in the current directory, which Hearth does not search; give its full path", command)
	case errors.Is(err, fs.ErrNotExist):
		e = primitive.Failed("program_not_found", "machine.exec: program %q does not exist; give the full path of an existing program", command)
	case errors.Is(err, fs.ErrPermission):
		e = primitive.Failed("not_runnable", "machine.exec: program %q may not be run by this account (the system refused permission); check that it is a program and that it may be executed", command)
	case errors.Is(err, syscall.ENOEXEC), errors.Is(err, syscall.EISDIR):
		e = primitive.Failed("not_runnable", "machine.exec: %q is not a program this system can run (a directory, a document, or a program for another system)", command)
	case errors.Is(err, context.DeadlineExceeded):
		e = primitive.Failed("timed_out", "machine.exec: the timeout ended before program %q could start", command)
	case errors.Is(err, context.Canceled):
		e = primitive.Failed("cancelled", "machine.exec: the call was cancelled before program %q could start", command)
	default:
		e = primitive.Failed("start_failed", "machine.exec: program %q could not be started; details.system_error has the system's reason", command)
	}
	return e.WithDetails(map[string]any{"system_error": err.Error()})
}
