package peeruser

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// Windows TCP table layouts (iphlpapi, GetExtendedTcpTable with
// TCP_TABLE_OWNER_PID_ALL): a DWORD count, then the rows. Every field is a
// DWORD in the machine's (little-endian) order, except that an IPv4
// address is stored in network order, an IPv6 address is 16 bytes in
// network order, and a port is the low 16 bits of its DWORD in network
// order.
const (
	// MIB_TCPROW_OWNER_PID: state, local addr, local port, remote addr,
	// remote port, owning pid.
	tcpRow4Len = 24
	// MIB_TCP6ROW_OWNER_PID: local addr[16], local scope, local port,
	// remote addr[16], remote scope, remote port, state, owning pid.
	tcpRow6Len = 56
)

// tcpRow is one connection of the table: its own (local) end, the end it
// is connected to, and the process that owns it.
type tcpRow struct {
	local, remote netip.AddrPort
	pid           uint32
}

// tableRows decodes a MIB_TCPTABLE_OWNER_PID (ipv6 false) or a
// MIB_TCP6TABLE_OWNER_PID (ipv6 true) as GetExtendedTcpTable wrote it.
func tableRows(b []byte, ipv6 bool) ([]tcpRow, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("a %d-byte TCP table has no row count", len(b))
	}
	n := int(binary.LittleEndian.Uint32(b))
	size := tcpRow4Len
	if ipv6 {
		size = tcpRow6Len
	}
	if n > (len(b)-4)/size {
		return nil, fmt.Errorf("a TCP table says %d rows but holds %d bytes", n, len(b))
	}
	rows := make([]tcpRow, n)
	le := binary.LittleEndian
	port := func(b []byte) uint16 { return binary.BigEndian.Uint16(b[:2]) }
	for i := range rows {
		r := b[4+i*size : 4+(i+1)*size]
		if ipv6 {
			rows[i] = tcpRow{
				local:  netip.AddrPortFrom(netip.AddrFrom16([16]byte(r[0:16])), port(r[20:24])),
				remote: netip.AddrPortFrom(netip.AddrFrom16([16]byte(r[24:40])), port(r[44:48])),
				pid:    le.Uint32(r[52:56]),
			}
			continue
		}
		rows[i] = tcpRow{
			local:  netip.AddrPortFrom(netip.AddrFrom4([4]byte(r[4:8])), port(r[8:12])),
			remote: netip.AddrPortFrom(netip.AddrFrom4([4]byte(r[12:16])), port(r[16:20])),
			pid:    le.Uint32(r[20:24]),
		}
	}
	return rows, nil
}

// peerPID finds, among a table's rows, the peer's socket of the
// connection that the accepting side sees from local to remote: the row
// whose own end is remote and whose other end is local. The accepting
// side's own row (the same four numbers the other way round) is never the
// answer.
func peerPID(rows []tcpRow, local, remote netip.AddrPort) (uint32, bool) {
	for _, r := range rows {
		if r.local == remote && r.remote == local {
			return r.pid, true
		}
	}
	return 0, false
}
