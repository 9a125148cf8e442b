package proc

import "golang.org/x/sys/unix"

// watchExit calls sweep as soon as the process pid (a child of ours) has
// exited, and then delivers true; it delivers false, without calling sweep,
// if it cannot tell. It waits with WNOWAIT so the child is left for
// exec.Cmd.Wait to reap: while the exited leader is an unreaped zombie its
// pid, and so its process group id, cannot be reused, which makes the
// sweep's kill(-pgid) safe. If Wait reaps first the wait fails with ECHILD,
// which also means the leader has exited.
func watchExit(pid int, sweep func()) <-chan bool {
	done := make(chan bool, 1)
	go func() {
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			switch err {
			case unix.EINTR:
				continue
			case nil, unix.ECHILD:
				sweep()
				done <- true
			default:
				done <- false
			}
			return
		}
	}()
	return done
}
