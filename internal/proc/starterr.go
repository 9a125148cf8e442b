package proc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"syscall"
)

// StartProblem says in Hearth's words, for the model that asked, why
// command could not be started: a code a caller branches on and a
// sentence without the system's text (Go's `exec: "x": executable file
// not found in $PATH` tells a model nothing it can act on). Every caller
// that starts a program for the model (machine.exec, an interactive
// session) words its refusal with it and keeps err's own text apart.
func StartProblem(command string, err error) (code, words string) {
	var pe *InputError
	if errors.As(err, &pe) {
		// The input was refused before anything started, in words of its own.
		return "invalid_input", pe.Reason
	}
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return "program_not_found", fmt.Sprintf("program %q was not found: it is not a path to a program, and no program of that name is on the search path (PATH); give its full path or check its name", command)
	case errors.Is(err, exec.ErrDot):
		return "program_not_found", fmt.Sprintf("program %q would be found only in the current directory, which Hearth does not search; give its full path", command)
	case errors.Is(err, fs.ErrNotExist):
		return "program_not_found", fmt.Sprintf("program %q does not exist; give the full path of an existing program", command)
	case errors.Is(err, fs.ErrPermission):
		return "not_runnable", fmt.Sprintf("program %q may not be run by this account (the system refused permission); check that it is a program and that it may be executed", command)
	case errors.Is(err, syscall.ENOEXEC), errors.Is(err, syscall.EISDIR):
		return "not_runnable", fmt.Sprintf("%q is not a program this system can run (a directory, a document, or a program for another system)", command)
	case errors.Is(err, context.DeadlineExceeded):
		return "timed_out", fmt.Sprintf("the timeout ended before program %q could start", command)
	case errors.Is(err, context.Canceled):
		return "cancelled", fmt.Sprintf("the call was cancelled before program %q could start", command)
	}
	return "start_failed", fmt.Sprintf("program %q could not be started; details.system_error has the system's reason", command)
}
