package machine

import (
	"errors"
	"io/fs"
	"os"
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

// startError says in Hearth's words why command could not be started
// (proc.StartProblem); the operating system's own text is kept only in
// details.system_error, for a person reading the log or the panel, never
// as the message a model reads (Go's `exec: "x": executable file not found
// in $PATH` tells a model nothing it can act on).
func startError(command string, err error) *primitive.Error {
	code, words := proc.StartProblem(command, err)
	e := primitive.Failed(code, "machine.exec: %s", words)
	if code == "invalid_input" {
		return e
	}
	return e.WithDetails(map[string]any{"system_error": err.Error()})
}
