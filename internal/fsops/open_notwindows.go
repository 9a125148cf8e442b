//go:build !windows

package fsops

import (
	"os"
	"syscall"
)

// openRead opens path for reading without blocking on what is not a
// regular file: a FIFO swapped in after a stat saw a file would otherwise
// hold the call in open(2) until a writer comes. Callers fstat the result
// and refuse (or skip) anything but a regular file.
func openRead(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
