package peeruser

import (
	"net"
	"net/netip"
)

// ends are an accepted connection's two ends as Owner takes them.
func ends(c net.Conn) (local, remote netip.AddrPort) {
	return unmap(c.LocalAddr().(*net.TCPAddr).AddrPort()), unmap(c.RemoteAddr().(*net.TCPAddr).AddrPort())
}
