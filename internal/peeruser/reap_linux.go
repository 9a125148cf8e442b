package peeruser

import (
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hearth-dev/hearth/internal/proc"
)

// reapOrphans reaps, for as long as the process lives, the exited
// processes the child subreaper adopted, and only those: a child Hearth
// started itself is left for its exec.Cmd.Wait, which needs its exit
// status. Go holds a pidfd for every child it starts until Wait has
// reaped it, so an exited child for which this process holds a pidfd is
// one of its own. An exited child is peeked at (WNOWAIT), pinned with a
// pidfd of the reaper's own (its pid cannot be reused while it is a
// zombie, and the pidfd reaps exactly it), and reaped only when no other
// descriptor of this process refers to it. It returns at once, reaping
// nothing, where Go cannot use pidfds (then the adopted stay zombies until
// Hearth exits, as before).
func reapOrphans() {
	reaperOnce.Do(startReaper)
}

// reaperOnce starts one reaper per process: two would each see the
// other's pidfd of an exited orphan and leave it.
var reaperOnce sync.Once

func startReaper() {
	probe, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return
	}
	unix.Close(probe)
	go func() {
		for {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOWAIT, nil)
			switch err {
			case nil:
			case unix.EINTR:
				continue
			default: // ECHILD: no child now; look again later
				time.Sleep(250 * time.Millisecond)
				continue
			}
			pid := int(siginfoPid(&info))
			if pid <= 0 || !reapIfAdopted(pid) {
				// Our own exited child comes first until its Wait reaps
				// it: look again shortly.
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
}

// reapIfAdopted reaps the exited child pid unless this process started it
// (holds a pidfd for it). It reports whether it reaped it.
func reapIfAdopted(pid int) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false // reaped meanwhile by its Wait
	}
	defer unix.Close(fd)
	if proc.PidfdHeld(pid, fd) {
		return false
	}
	var info unix.Siginfo
	return unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil) == nil
}

// siginfoPid is si_pid of a siginfo that waitid filled: the first field
// of the union after three ints (and, on 64-bit systems, padding).
func siginfoPid(info *unix.Siginfo) int32 {
	off := uintptr(12)
	if unsafe.Sizeof(uintptr(0)) == 8 {
		off = 16
	}
	return *(*int32)(unsafe.Add(unsafe.Pointer(info), off))
}
