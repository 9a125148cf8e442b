package peeruser

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
)

// heldBy finds the peer's socket inode and looks for it among the open
// descriptors of pid: a descriptor of a socket reads "socket:[inode]".
func heldBy(local, remote netip.AddrPort, pid int) (bool, error) {
	s, err := peerSocket(local, remote)
	if err != nil {
		return false, err
	}
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("list the open files of process %d: %w", pid, err)
	}
	want := "socket:[" + strconv.FormatUint(s.inode, 10) + "]"
	for _, e := range ents {
		// A descriptor closed since the listing is simply not it.
		if link, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && link == want {
			return true, nil
		}
	}
	return false, nil
}
