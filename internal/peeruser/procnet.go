package peeruser

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
)

// procSocket is one row of /proc/net/tcp or /proc/net/tcp6: a socket's
// own (local) end, the end it is connected to, its owner uid and its
// inode (0 when no process holds it any more: closed, or in TIME_WAIT,
// whose uid the kernel reports as 0).
type procSocket struct {
	local, remote netip.AddrPort
	uid           uint32
	inode         uint64
}

// findProcSocket reads a /proc/net/tcp or tcp6 table and returns the row
// whose own end is own and whose other end is peer.
func findProcSocket(table io.Reader, own, peer netip.AddrPort) (procSocket, bool, error) {
	sc := bufio.NewScanner(table)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	first := true
	for sc.Scan() {
		if first { // the header line
			first = false
			continue
		}
		s, err := parseProcLine(sc.Text())
		if err != nil {
			return procSocket{}, false, err
		}
		if s.local == own && s.remote == peer {
			return s, true, nil
		}
	}
	return procSocket{}, false, sc.Err()
}

// parseProcLine parses one row:
//
//	sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
//
// Addresses are the kernel's in-memory words printed as hex host-order
// 32-bit numbers (one for IPv4, four for IPv6); ports are plain hex.
func parseProcLine(line string) (procSocket, error) {
	f := strings.Fields(line)
	if len(f) < 10 {
		return procSocket{}, fmt.Errorf("a /proc/net/tcp row has %d fields, want at least 10: %q", len(f), line)
	}
	local, err := parseProcAddr(f[1])
	if err != nil {
		return procSocket{}, err
	}
	remote, err := parseProcAddr(f[2])
	if err != nil {
		return procSocket{}, err
	}
	uid, err := strconv.ParseUint(f[7], 10, 32)
	if err != nil {
		return procSocket{}, fmt.Errorf("a /proc/net/tcp row's uid %q: %w", f[7], err)
	}
	inode, err := strconv.ParseUint(f[9], 10, 64)
	if err != nil {
		return procSocket{}, fmt.Errorf("a /proc/net/tcp row's inode %q: %w", f[9], err)
	}
	return procSocket{local: local, remote: remote, uid: uint32(uid), inode: inode}, nil
}

func parseProcAddr(s string) (netip.AddrPort, error) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("a /proc/net/tcp address %q has no port", s)
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("a /proc/net/tcp address %q: port: %w", s, err)
	}
	raw, err := hex.DecodeString(hexAddr)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("a /proc/net/tcp address %q is not 8 or 32 hex digits", s)
	}
	// Each group of 8 digits is one 32-bit word printed in host order:
	// turn it back into the word's bytes as they are in memory, which are
	// the address's bytes in network order.
	var b [16]byte
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(b[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	if len(raw) == 4 {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[:4])), uint16(port)), nil
	}
	return netip.AddrPortFrom(netip.AddrFrom16(b), uint16(port)), nil
}
