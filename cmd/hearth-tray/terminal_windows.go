package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// isTerminal reports whether f is an interactive console: its console mode
// can be read. NUL, pipes and files are not consoles.
func isTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}
