//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is an interactive terminal: its terminal
// attributes can be read. A character device that is not a terminal, such
// as /dev/null, is not one.
func isTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), getTermios)
	return err == nil
}
