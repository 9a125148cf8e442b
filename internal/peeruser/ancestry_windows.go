package peeruser

import (
	"errors"
	"fmt"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/windows"
)

// peerPIDs is the TCP table's owning pid of the peer's row.
func peerPIDs(local, remote netip.AddrPort) ([]int, error) {
	pid, err := peerProcess(local, remote)
	if err != nil {
		return nil, err
	}
	return []int{int(pid)}, nil
}

// descendsFrom walks ParentProcessID in one Toolhelp snapshot of all
// processes. A parent that is not in the snapshot has exited (Windows
// does not re-parent its children): the chain ends there.
func descendsFrom(pid, ancestor int) (bool, error) {
	parents, err := parentPIDs()
	if err != nil {
		return false, err
	}
	if _, ok := parents[uint32(pid)]; !ok {
		return false, fmt.Errorf("process %d: %w", pid, ErrNotFound)
	}
	cur := uint32(pid)
	for step := 0; step < maxAncestry; step++ {
		if cur == uint32(ancestor) {
			return true, nil
		}
		parent, ok := parents[cur]
		if !ok || parent == 0 || parent == cur {
			return false, nil
		}
		if _, ok := parents[parent]; !ok {
			return false, nil
		}
		if createdAfter(parent, cur) {
			return false, nil
		}
		cur = parent
	}
	return false, nil
}

// parentPIDs maps every process's pid to its ParentProcessID.
func parentPIDs() (map[uint32]uint32, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, fmt.Errorf("snapshot the process list: %w", err)
	}
	defer windows.CloseHandle(snap)
	parents := map[uint32]uint32{}
	e := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
	err = windows.Process32First(snap, &e)
	for err == nil {
		parents[e.ProcessID] = e.ParentProcessID
		err = windows.Process32Next(snap, &e)
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return nil, fmt.Errorf("read the process list: %w", err)
	}
	return parents, nil
}

// createdAfter reports whether process parent was created after process
// child: then parent's pid was reused by a newer process and is not the
// child's parent. When either creation time cannot be read (a protected
// process, another account's) it answers false and the walk goes on.
func createdAfter(parent, child uint32) bool {
	pt, ok1 := created(parent)
	ct, ok2 := created(child)
	return ok1 && ok2 && pt > ct
}

func created(pid uint32) (int64, bool) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return 0, false
	}
	defer windows.CloseHandle(h)
	var c, x, k, u windows.Filetime
	if err := windows.GetProcessTimes(h, &c, &x, &k, &u); err != nil {
		return 0, false
	}
	return c.Nanoseconds(), true
}

// AdoptOrphans does nothing on Windows: it has no child subreapers, and a
// process keeps its (exited) parent's pid as its ParentProcessID.
func AdoptOrphans() error { return nil }
