package peeruser

import (
	"fmt"
	"net"
	"net/netip"
)

// HeldBy reports whether process pid holds the peer end of a TCP
// connection, given the connection's two ends as the accepting side sees
// them (as for Owner): whether the connection was made by that process.
// On Linux the peer's socket inode is looked up as for Owner and looked
// for among pid's open descriptors (/proc/<pid>/fd); on Windows the TCP
// table's owning pid of the peer's row is compared. Elsewhere it fails
// with ErrUnsupported. A peer end nobody holds any more is ErrNotFound.
func HeldBy(local, remote netip.AddrPort, pid int) (bool, error) {
	if pid <= 0 {
		return false, fmt.Errorf("process id %d is not a process", pid)
	}
	local, remote = unmap(local), unmap(remote)
	if local.Addr().Is4() != remote.Addr().Is4() {
		return false, fmt.Errorf("connection %s -> %s mixes IPv4 and IPv6", remote, local)
	}
	return heldBy(local, remote, pid)
}

// ConnHeldBy is HeldBy for an accepted connection.
func ConnHeldBy(c net.Conn, pid int) (bool, error) {
	l, ok1 := c.LocalAddr().(*net.TCPAddr)
	r, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return false, fmt.Errorf("not a TCP connection (%s)", c.LocalAddr().Network())
	}
	return HeldBy(l.AddrPort(), r.AddrPort(), pid)
}
