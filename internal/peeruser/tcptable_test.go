package peeruser

import (
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"
)

// Tables as GetExtendedTcpTable (TCP_TABLE_OWNER_PID_ALL) wrote them under
// Wine 8.0, recorded by TestWindowsOwnerAdmitsSameUser. In the IPv4 one,
// this test process (pid 0x368 = 872) held 127.0.0.1:37865 connected to its
// own listener 127.0.0.1:35007; the accepting side's row (the same ends the
// other way round) has pid 0 there. Wine leaves every pid of its IPv6
// table 0 (and the scope ids 0x1000); in it, [::1]:39723 is connected to a
// listener on [::1]:37941.
const (
	recordedTable4 = "" +
		"0d000000" +
		"020000007f00000194330000000000000000000000000000" +
		"020000000000000007e80000000000000000000000000000" +
		"020000007f00000188bf0000000000000000000000000000" +
		"020000007f0000018b710000000000000000000000000000" +
		"0b0000007f000001861500007f000001d99e000000000000" +
		"0b0000007f00000189a900007f0000018cff000000000000" +
		"0b0000007f000001896100007f0000018496000000000000" +
		"050000007f00000188bf00007f00000193e9000000000000" +
		"0b0000007f000001941f00007f00000187a7000000000000" +
		"050000007f00000193e900007f00000188bf000068030000" +
		"0b0000007f00000186fd00007f000001af6d000000000000" +
		"0b0000007f000001900e00007f000001aad3000000000000" +
		"0b0000007f000001901600007f000001aad3000000000000"
	recordedTable6 = "" +
		"04000000" +
		"0000000000000000000000000000000100100000943500000000000000000000000000000000000000000000000000000200000000000000" +
		"00000000000000000000000000000001001000009435000000000000000000000000000000000001001000009b2b00000500000000000000" +
		"00000000000000000000000000000001001000009b2b00000000000000000000000000000000000100100000943500000500000000000000" +
		"0000000000000000000000000000000100100000807d00000000000000000000000000000000000100100000973700000b00000000000000"
)

func decodeTable(t *testing.T, h string) []byte {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTableRowsIPv4(t *testing.T) {
	rows, err := tableRows(decodeTable(t, recordedTable4), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 13 {
		t.Fatalf("%d rows, want 13", len(rows))
	}
	if r := rows[0]; r.local != netip.MustParseAddrPort("127.0.0.1:37939") || r.remote != netip.MustParseAddrPort("0.0.0.0:0") || r.pid != 0 {
		t.Errorf("row 0 = %+v", r)
	}
	if r := rows[9]; r.local != netip.MustParseAddrPort("127.0.0.1:37865") || r.remote != netip.MustParseAddrPort("127.0.0.1:35007") || r.pid != 872 {
		t.Errorf("row 9 = %+v", r)
	}
	// The accepting side sees 127.0.0.1:35007 (local) <- 127.0.0.1:37865
	// (remote): the peer is the row whose own end is 37865, pid 872, not
	// the accepting side's own row (pid 0).
	local, remote := netip.MustParseAddrPort("127.0.0.1:35007"), netip.MustParseAddrPort("127.0.0.1:37865")
	if pid, ok := peerPID(rows, local, remote); !ok || pid != 872 {
		t.Errorf("peerPID = %d, %v; want 872", pid, ok)
	}
	// Turned round, the same connection names the other row.
	if pid, ok := peerPID(rows, remote, local); !ok || pid != 0 {
		t.Errorf("peerPID reversed = %d, %v; want the accepting row's 0", pid, ok)
	}
	if _, ok := peerPID(rows, local, netip.MustParseAddrPort("127.0.0.1:1")); ok {
		t.Error("a port no row has was found")
	}
}

func TestTableRowsIPv6(t *testing.T) {
	b := decodeTable(t, recordedTable6)
	rows, err := tableRows(b, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	local, remote := netip.MustParseAddrPort("[::1]:37941"), netip.MustParseAddrPort("[::1]:39723")
	if r := rows[2]; r.local != remote || r.remote != local {
		t.Errorf("row 2 = %+v", r)
	}
	if _, ok := peerPID(rows, local, remote); !ok {
		t.Error("the peer's row is not found")
	}
	// Windows fills the pid (Wine does not): the last DWORD of a row.
	copy(b[4+2*tcpRow6Len+52:], []byte{0x68, 0x03, 0, 0})
	rows, _ = tableRows(b, true)
	if pid, _ := peerPID(rows, local, remote); pid != 872 {
		t.Errorf("pid = %d, want 872", pid)
	}
}

func TestTableRowsRefusesShortTables(t *testing.T) {
	for _, tc := range []struct {
		hex  string
		ipv6 bool
	}{
		{"", false},
		{"0100", false},
		{"02000000" + strings.Repeat("00", tcpRow4Len), false},
		{"01000000" + strings.Repeat("00", tcpRow4Len), true},
	} {
		if _, err := tableRows(decodeTable(t, tc.hex), tc.ipv6); err == nil {
			t.Errorf("%q (ipv6 %v): no error", tc.hex, tc.ipv6)
		}
	}
}
