package proc

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// holdStarted opens a pidfd for pid, a child not yet reaped (so its pid
// is still its own), or answers -1 when the kernel gives none.
func holdStarted(pid int) int {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1
	}
	return fd
}

func releaseStarted(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

// killStarted kills p and its descendants the way KillAdopted kills an
// adopted tree: p is stopped through its own pidfd (it may have ended,
// even been reaped, meanwhile: the pidfd then reaches nothing), its
// descendants held by pidfds of their own and stopped walk after walk,
// then all are killed through their pidfds.
func killStarted(pid int, p *started) (int, error) {
	if p.fd < 0 {
		return 0, fmt.Errorf("kill the program %d Hearth started: the kernel gave no pidfd for it", pid)
	}
	fd, err := unix.FcntlInt(uintptr(p.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("kill the program %d Hearth started: %w", pid, err)
	}
	held, hold := treeHolder()
	defer closeHeld(held)
	held[pid] = fd
	if err := unix.PidfdSendSignal(fd, unix.SIGSTOP, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return 0, nil
		}
		return 0, fmt.Errorf("stop the program %d Hearth started: %w", pid, err)
	}
	return killHeldTree(os.Getpid(), held, hold)
}
