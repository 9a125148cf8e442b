// Package peeruser finds which operating-system account owns the other end
// of a loopback TCP connection, and guards a listener so that it serves
// only the account Hearth runs as.
//
// Loopback is shared by every account on a computer: a family member's, a
// guest's, another remote-desktop session, a service. Without this check
// any of them could call Hearth's MCP endpoint and read (or, in trusted
// mode, run) as the signed-in user. The decision is made once per TCP
// connection, when it is accepted and before any byte of it is read:
//
//   - Linux: the uid of the peer's socket, found by its address and port
//     pair with one socket-diagnostics netlink query (NETLINK_SOCK_DIAG,
//     an exact lookup, not a dump); /proc/net/tcp and /proc/net/tcp6 are
//     read only when netlink is unavailable.
//   - Windows: the owning process of the peer's row in the TCP table
//     (GetExtendedTcpTable, owner-PID form, IPv4 and IPv6), then that
//     process's token user SID.
//   - Elsewhere the owner cannot be determined, and every connection is
//     refused (config key loopback_same_user turns the check off).
//
// PeerPIDs and DescendsFrom go one step further for the tray control
// endpoint: which processes hold the peer end, and whether one of them is
// Hearth or was started by it (AdoptOrphans keeps detached ones below
// Hearth on Linux).
package peeruser

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// Account is an operating-system account: ID is what is compared (the uid
// on Linux, the SID on Windows); Name is for people and may be empty.
type Account struct {
	ID   string
	Name string
}

// String names the account for a log line: "uid 1000 (alice)" or
// "S-1-5-21-… (PC\alice)".
func (a Account) String() string {
	if a.Name == "" {
		return a.ID
	}
	return a.ID + " (" + a.Name + ")"
}

// ErrUnsupported: this operating system gives no way to find the owner of
// a connection that Hearth implements.
var ErrUnsupported = errors.New("the owner of a loopback connection cannot be determined on this operating system")

// ErrNotFound: no live socket of any process matches the connection's peer
// end (it was closed before it was looked at, or belongs to no process any
// more), so there is no owner to compare.
var ErrNotFound = errors.New("no process holds the peer end of the connection any more")

// Owner returns the account owning the peer end of a TCP connection, given
// the connection's two ends as the accepting side sees them (local is the
// listener's address, remote the peer's). Only its ID is set: Named adds
// the name, which costs an account-database lookup.
func Owner(local, remote netip.AddrPort) (Account, error) {
	local, remote = unmap(local), unmap(remote)
	if local.Addr().Is4() != remote.Addr().Is4() {
		return Account{}, fmt.Errorf("connection %s -> %s mixes IPv4 and IPv6", remote, local)
	}
	return owner(local, remote)
}

// Named returns a with its name looked up (left empty when unknown).
func Named(a Account) Account { return named(a) }

// Self returns the account this process runs as.
func Self() (Account, error) { return self() }

// Method names how Owner finds the owner on this operating system, for
// host_info and doctor; "" where it cannot (Owner answers ErrUnsupported).
func Method() string { return method }

// ConnOwner is Owner for an accepted connection.
func ConnOwner(c net.Conn) (Account, error) {
	l, ok1 := c.LocalAddr().(*net.TCPAddr)
	r, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return Account{}, fmt.Errorf("not a TCP connection (%s)", c.LocalAddr().Network())
	}
	return Owner(l.AddrPort(), r.AddrPort())
}

// Probe connects to a listener of its own on 127.0.0.1 and looks up the
// owner of that connection, which must be Self: doctor's proof that the
// check admits the user on this host. It returns Self, named.
func Probe() (Account, error) {
	me, err := Self()
	if err != nil {
		return Account{}, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Account{}, fmt.Errorf("listen for the owner probe: %w", err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return Account{}, fmt.Errorf("connect for the owner probe: %w", err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		return Account{}, fmt.Errorf("accept the owner probe: %w", err)
	}
	defer server.Close()
	got, err := ConnOwner(server)
	if err != nil {
		return Account{}, fmt.Errorf("find the owner of a test connection: %w", err)
	}
	if got.ID != me.ID {
		return got, fmt.Errorf("a test connection of this process was reported as owned by %s, not by %s", Named(got), me)
	}
	return me, nil
}

func unmap(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}
