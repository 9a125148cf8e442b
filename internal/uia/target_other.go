//go:build !windows

package uia

import (
	"errors"
	"os"
	"strconv"
)

// windowProcess has no windows to look at here.
func windowProcess(uint64) (int, error) { return 0, errors.ErrUnsupported }

// processImage returns the program file of process pid where /proc shows
// it (Linux), else an error.
func processImage(pid int) (string, error) {
	return os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
}
