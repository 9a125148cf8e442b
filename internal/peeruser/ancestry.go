package peeruser

import (
	"fmt"
	"net"
	"net/netip"
)

// maxAncestry bounds DescendsFrom's walk up the parent chain: a chain
// longer than this is a loop made by a reused pid, not a real ancestry.
const maxAncestry = 1024

// PeerPIDs returns the pids of the processes holding the peer end of a TCP
// connection, given its two ends as the accepting side sees them (as for
// Owner). On Linux the peer's socket inode is found as for Owner and
// looked for among the open descriptors of every process this account can
// read (/proc/<pid>/fd; a descriptor inherited by a child is held by both);
// on Windows it is the TCP table's owning pid of the peer's row. Elsewhere
// it fails with ErrUnsupported; a peer end nobody holds is ErrNotFound.
func PeerPIDs(local, remote netip.AddrPort) ([]int, error) {
	local, remote = unmap(local), unmap(remote)
	if local.Addr().Is4() != remote.Addr().Is4() {
		return nil, fmt.Errorf("connection %s -> %s mixes IPv4 and IPv6", remote, local)
	}
	return peerPIDs(local, remote)
}

// ConnPeerPIDs is PeerPIDs for an accepted connection.
func ConnPeerPIDs(c net.Conn) ([]int, error) {
	l, ok1 := c.LocalAddr().(*net.TCPAddr)
	r, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("not a TCP connection (%s)", c.LocalAddr().Network())
	}
	return PeerPIDs(l.AddrPort(), r.AddrPort())
}

// DescendsFrom reports whether process pid is ancestor or was started by
// it, directly or through any number of processes between, by walking
// parent pids (Linux: /proc/<pid>/stat; Windows: a Toolhelp process
// snapshot). The walk stops, answering false, at a process with no parent,
// at a parent created after its child (the parent's pid was reused by a
// newer process) and after maxAncestry steps. On Linux a process whose
// parent exited is re-parented to the nearest child subreaper, so a
// program that double-forks stays Hearth's descendant once Hearth called
// AdoptOrphans; on Windows a parent pid is not updated when the parent
// exits, and the chain ends there. An error means pid (or a parent whose
// pid was read) could not be looked at; the answer is then unknown.
func DescendsFrom(pid, ancestor int) (bool, error) {
	if pid <= 0 || ancestor <= 0 {
		return false, fmt.Errorf("process ids %d and %d: not processes", pid, ancestor)
	}
	return descendsFrom(pid, ancestor)
}
