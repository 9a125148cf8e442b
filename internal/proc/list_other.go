//go:build !linux && !windows

package proc

import (
	"errors"
	"fmt"
)

// List is not implemented on this OS: Hearth's targets are Windows and
// Linux, and reading another Unix's process table needs its own code
// (sysctl on the BSDs and macOS).
func List() ([]Info, error) {
	return nil, fmt.Errorf("list processes: %w", errors.ErrUnsupported)
}

func parentMap() (map[int]int, error) {
	return nil, fmt.Errorf("list processes: %w", errors.ErrUnsupported)
}

// watchExit has no WNOWAIT wait here, so leftovers are swept only after
// exec.Cmd.Wait returns (see group.close).
func watchExit(int, func()) <-chan bool { return nil }
