package peeruser

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

const method = "netlink sock_diag (fallback /proc/net/tcp, /proc/net/tcp6)"

func self() (Account, error) { return named(uidAccount(uint32(os.Geteuid()))), nil }

func uidAccount(uid uint32) Account { return Account{ID: "uid " + strconv.FormatUint(uint64(uid), 10)} }

func named(a Account) Account {
	if uid, ok := strings.CutPrefix(a.ID, "uid "); ok {
		if u, err := user.LookupId(uid); err == nil {
			a.Name = u.Username
		}
	}
	return a
}

func owner(local, remote netip.AddrPort) (Account, error) {
	s, err := peerSocket(local, remote)
	if err != nil {
		return Account{}, err
	}
	return uidAccount(s.uid), nil
}

// peerSocket finds the peer's socket of a connection (its owner uid and
// inode) with netlink, or in /proc when netlink is unavailable.
func peerSocket(local, remote netip.AddrPort) (procSocket, error) {
	s, err := diagSocket(local, remote)
	var unavailable *netlinkUnavailableError
	if errors.As(err, &unavailable) {
		s, err = procSocketOf(local, remote)
		if err != nil {
			err = fmt.Errorf("%w (and %v)", err, unavailable)
		}
	}
	return s, err
}

// netlinkUnavailableError: the socket-diagnostics query could not be asked
// (no netlink here, or it is filtered); /proc is read instead.
type netlinkUnavailableError struct{ err error }

func (e *netlinkUnavailableError) Error() string { return "sock_diag netlink: " + e.err.Error() }

// Netlink socket-diagnostics constants (linux/sock_diag.h,
// linux/inet_diag.h).
const (
	sockDiagByFamily = 20
	inetDiagNoCookie = ^uint32(0)
	diagReqLen       = 56 // struct inet_diag_req_v2
	diagMsgLen       = 72 // struct inet_diag_msg
	diagSockIDOff    = 4  // inet_diag_msg.id
	diagUIDOff       = 64 // inet_diag_msg.idiag_uid
	diagInodeOff     = 68 // inet_diag_msg.idiag_inode
	tcpListen        = 10
)

// diagUID is diagSocket's owner uid.
func diagUID(local, remote netip.AddrPort) (uint32, error) {
	s, err := diagSocket(local, remote)
	return s.uid, err
}

// diagSocket asks the kernel for the one TCP socket whose own end is remote
// and whose other end is local — the peer's socket — and returns its
// owner's uid and inode. This is an exact lookup (no NLM_F_DUMP): the kernel finds
// the socket in its hash table without walking the others.
func diagSocket(local, remote netip.AddrPort) (procSocket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return procSocket{}, &netlinkUnavailableError{fmt.Errorf("socket: %w", err)}
	}
	defer unix.Close(fd)
	// The kernel answers at once; a receive that waits longer than this
	// falls back to /proc rather than holding the listener's Accept.
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 2}); err != nil {
		return procSocket{}, &netlinkUnavailableError{fmt.Errorf("set a receive timeout: %w", err)}
	}
	family := byte(unix.AF_INET6)
	if remote.Addr().Is4() {
		family = unix.AF_INET
	}
	id := diagSockID(remote, local)
	req := make([]byte, unix.NLMSG_HDRLEN+diagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], sockDiagByFamily)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // sequence number
	r := req[unix.NLMSG_HDRLEN:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], ^uint32(0)) // every state
	copy(r[8:], id[:])
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return procSocket{}, &netlinkUnavailableError{fmt.Errorf("send: %w", err)}
	}
	buf := make([]byte, 8192)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return procSocket{}, &netlinkUnavailableError{fmt.Errorf("receive: %w", err)}
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return procSocket{}, &netlinkUnavailableError{fmt.Errorf("parse the answer: %w", err)}
	}
	for _, m := range msgs {
		switch m.Header.Type {
		case unix.NLMSG_ERROR:
			if len(m.Data) < 4 {
				return procSocket{}, &netlinkUnavailableError{errors.New("short error message")}
			}
			errno := unix.Errno(-int32(ne.Uint32(m.Data)))
			if errno == unix.ENOENT {
				return procSocket{}, ErrNotFound
			}
			return procSocket{}, &netlinkUnavailableError{fmt.Errorf("the kernel answers: %w", errno)}
		case sockDiagByFamily:
			d := m.Data
			if len(d) < diagMsgLen {
				return procSocket{}, &netlinkUnavailableError{fmt.Errorf("a %d-byte inet_diag_msg", len(d))}
			}
			// The kernel may fall back to a listener on the same address
			// and port; only the exact connection counts.
			own, peer := diagEnds(d[0], d[diagSockIDOff:diagSockIDOff+36])
			if d[1] == tcpListen || own != remote || peer != local {
				return procSocket{}, ErrNotFound
			}
			inode := ne.Uint32(d[diagInodeOff:])
			if inode == 0 {
				return procSocket{}, ErrNotFound
			}
			return procSocket{local: own, remote: peer, uid: ne.Uint32(d[diagUIDOff:]), inode: uint64(inode)}, nil
		}
	}
	return procSocket{}, &netlinkUnavailableError{errors.New("no answer to the query")}
}

// diagSockID builds struct inet_diag_sockid for a socket whose own end is
// own and whose other end is peer: ports and addresses in network order,
// no interface, no cookie.
func diagSockID(own, peer netip.AddrPort) [48]byte {
	var id [48]byte
	binary.BigEndian.PutUint16(id[0:], own.Port())
	binary.BigEndian.PutUint16(id[2:], peer.Port())
	putDiagAddr(id[4:20], own.Addr())
	putDiagAddr(id[20:36], peer.Addr())
	binary.NativeEndian.PutUint32(id[40:], inetDiagNoCookie)
	binary.NativeEndian.PutUint32(id[44:], inetDiagNoCookie)
	return id
}

// diagEnds decodes the two ends of an answer's inet_diag_sockid; the
// socket may be an IPv6 one connected to a v4-mapped address, which is
// compared as the IPv4 address it maps.
func diagEnds(family byte, id []byte) (own, peer netip.AddrPort) {
	addr := func(b []byte) netip.Addr {
		if family == unix.AF_INET {
			return netip.AddrFrom4([4]byte(b[:4]))
		}
		return netip.AddrFrom16([16]byte(b[:16])).Unmap()
	}
	own = netip.AddrPortFrom(addr(id[4:20]), binary.BigEndian.Uint16(id[0:]))
	peer = netip.AddrPortFrom(addr(id[20:36]), binary.BigEndian.Uint16(id[2:]))
	return own, peer
}

func putDiagAddr(dst []byte, a netip.Addr) {
	if a.Is4() {
		b := a.As4()
		copy(dst, b[:])
		return
	}
	b := a.As16()
	copy(dst, b[:])
}

// procUID is procSocketOf's owner uid.
func procUID(local, remote netip.AddrPort) (uint32, error) {
	s, err := procSocketOf(local, remote)
	return s.uid, err
}

// procSocketOf finds the peer's socket in /proc/net/tcp or /proc/net/tcp6
// (an IPv4 peer may hold an IPv6 socket connected to a v4-mapped address).
func procSocketOf(local, remote netip.AddrPort) (procSocket, error) {
	type table struct {
		path      string
		own, peer netip.AddrPort
	}
	tables := []table{{"/proc/net/tcp6", remote, local}}
	if remote.Addr().Is4() {
		mapped := func(a netip.AddrPort) netip.AddrPort {
			return netip.AddrPortFrom(netip.AddrFrom16(a.Addr().As16()), a.Port())
		}
		tables = []table{{"/proc/net/tcp", remote, local}, {"/proc/net/tcp6", mapped(remote), mapped(local)}}
	}
	var errs []error
	for _, t := range tables {
		f, err := os.Open(t.path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s, found, err := findProcSocket(f, t.own, t.peer)
		f.Close()
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("read %s: %w", t.path, err))
		case found && s.inode == 0:
			return procSocket{}, ErrNotFound
		case found:
			return s, nil
		}
	}
	if len(errs) == len(tables) {
		return procSocket{}, fmt.Errorf("find the peer socket: %w", errors.Join(errs...))
	}
	return procSocket{}, ErrNotFound
}
