package peeruser

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// peerPIDs finds the peer's socket inode and looks for "socket:[inode]"
// among the open descriptors of every process in /proc this account may
// read (another account's are unreadable and skipped: the listener's
// guard refuses their connections anyway).
func peerPIDs(local, remote netip.AddrPort) ([]int, error) {
	s, err := peerSocket(local, remote)
	if err != nil {
		return nil, err
	}
	want := "socket:[" + strconv.FormatUint(s.inode, 10) + "]"
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var pids []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid <= 0 {
			continue
		}
		dir := filepath.Join("/proc", p.Name(), "fd")
		ents, err := os.ReadDir(dir)
		if err != nil {
			// Exited since the listing, or another account's.
			continue
		}
		for _, e := range ents {
			if link, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && link == want {
				pids = append(pids, pid)
				break
			}
		}
	}
	if len(pids) == 0 {
		return nil, ErrNotFound
	}
	return pids, nil
}

// procStat is what DescendsFrom reads of /proc/<pid>/stat.
type procStat struct {
	ppid  int
	start uint64 // field 22, starttime, in clock ticks since boot
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, fmt.Errorf("read the status of process %d: %w", pid, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces and
	// parentheses itself: the fields after it follow its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("read the status of process %d: no command name", pid)
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22.
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("read the status of process %d: %d fields", pid, len(f)+2)
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return procStat{}, fmt.Errorf("read the status of process %d: %w", pid, err)
	}
	return procStat{ppid: ppid, start: start}, nil
}

func descendsFrom(pid, ancestor int) (bool, error) {
	cur, err := readStat(pid)
	if err != nil {
		return false, err
	}
	for step := 0; step < maxAncestry; step++ {
		if pid == ancestor {
			return true, nil
		}
		if cur.ppid <= 0 {
			return false, nil
		}
		parent, err := readStat(cur.ppid)
		if errors.Is(err, fs.ErrNotExist) {
			// The parent exited after its child's status was read: the
			// child has a new parent now (Hearth, if it is the subreaper
			// above it). Read the child again.
			if cur, err = readStat(pid); err != nil {
				return false, err
			}
			continue
		}
		if err != nil {
			return false, err
		}
		if parent.start > cur.start {
			return false, nil
		}
		pid, cur = cur.ppid, parent
	}
	return false, nil
}

// AdoptOrphans makes this process a child subreaper
// (PR_SET_CHILD_SUBREAPER): a process started under it whose parent exits
// (a program that double-forks or calls setsid to leave its parent) is
// re-parented to this process instead of to init, so DescendsFrom still
// finds it below Hearth. Hearth calls it at start so that a program the
// model runs cannot leave Hearth's process tree and then ask the control
// endpoint for an operator login. Such an adopted process is reaped once
// it exits (reapOrphans), without taking the exit status of a command
// Hearth runs and waits for itself.
func AdoptOrphans() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("become a child subreaper: %w", err)
	}
	reapOrphans()
	return nil
}
