package session

import "errors"

// terminal is one program running on a pseudo-terminal: a pty on Unix, a
// pseudo-console (ConPTY) on Windows. Its program runs in a process tree
// of its own (internal/proc), which dies with Hearth.
type terminal interface {
	// Read reads what the program wrote to its terminal; it fails once the
	// program and everything holding the terminal have gone.
	Read(p []byte) (int, error)
	// Write types p into the terminal.
	Write(p []byte) (int, error)
	PID() int
	// Kill kills the program's whole process tree.
	Kill() error
	// Wait waits for the program to exit and returns its exit code (-1
	// when it was killed by a signal). The output may end only after it
	// returns (Windows closes the pseudo-console then).
	Wait() int
	// Close releases the terminal once Wait has returned.
	Close() error
}

// startSpec is the program a session runs.
type startSpec struct {
	Command    string
	Args       []string
	Dir        string
	Env        map[string]string
	Cols, Rows uint16
}

// ErrUnavailable reports that this host has no pseudo-terminal Hearth can
// use (a Windows without ConPTY, such as an old Wine).
var ErrUnavailable = errors.New("pseudo-console unavailable")
