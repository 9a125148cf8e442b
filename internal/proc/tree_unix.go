//go:build !windows

package proc

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// adjust leaves the Unix attributes as they are: the child already leads
// a process group of its own.
func (t *Tree) adjust(*syscall.SysProcAttr) bool { return false }

// interrupt sends SIGTERM to the child's whole process group, as a
// terminal's Ctrl-C reaches the whole foreground group.
func (t *Tree) interrupt(pid int) error {
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return fmt.Errorf("signal process group %d: %w", pid, err)
	}
	return nil
}
