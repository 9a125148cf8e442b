//go:build !linux

package proc

import (
	"errors"
	"fmt"
	"os"
)

// holdStarted holds nothing off Linux: there is no pidfd.
func holdStarted(int) int { return -1 }

func releaseStarted(int) {}

// killStarted kills the program itself through its os.Process (which
// signals only the process it started). Off Linux the opener hands no
// program to a Started on Windows (its apps are opened through the
// shell, which returns no process), and elsewhere what the program
// started is not followed.
func killStarted(_ int, p *started) (int, error) {
	switch err := p.cmd.Process.Kill(); {
	case err == nil:
		return 1, nil
	case errors.Is(err, os.ErrProcessDone):
		return 0, nil
	default:
		return 0, fmt.Errorf("kill process %d: %w", p.cmd.Process.Pid, err)
	}
}
