package peeruser

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
)

// Rows in the kernel's /proc/net/tcp and /proc/net/tcp6 format. The
// listener and TIME_WAIT rows are copied from a Linux host; the
// established ones are written to the same format with a uid and an inode.
const (
	procTCP4 = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:9433 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 185628 1 00000000083af707 100 0 0 10 0
   1: 0100007F:88BF 0100007F:93E9 01 00000000:00000000 00:00000000 00000000  1000        0 424241 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:93E9 0100007F:88BF 01 00000000:00000000 00:00000000 00000000 65534        0 424242 1 0000000000000000 20 4 30 10 -1
`
	procTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:9435 00000000000000000000000001000000:9B2B 06 00000000:00000000 03:00000C6A 00000000     0        0 0 3 00000000d1cc685b
   1: 0000000000000000FFFF00000100007F:A000 0000000000000000FFFF00000100007F:0BB8 01 00000000:00000000 00:00000000 00000000  1001        0 525252 1 0000000000000000 20 4 30 10 -1
`
)

func TestFindProcSocket(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the recorded rows are a little-endian host's")
	}
	p := netip.MustParseAddrPort
	for _, tc := range []struct {
		name      string
		table     string
		own, peer netip.AddrPort
		found     bool
		uid       uint32
		inode     uint64
	}{
		{"the peer's row, not the accepting side's", procTCP4, p("127.0.0.1:37865"), p("127.0.0.1:35007"), true, 65534, 424242},
		{"the accepting side's row", procTCP4, p("127.0.0.1:35007"), p("127.0.0.1:37865"), true, 1000, 424241},
		{"a listener is not a connection", procTCP4, p("127.0.0.1:37939"), p("127.0.0.1:1"), false, 0, 0},
		{"TIME_WAIT: no inode", procTCP6, p("[::1]:37941"), p("[::1]:39723"), true, 0, 0},
		{"v4-mapped", procTCP6, p("[::ffff:127.0.0.1]:40960"), p("[::ffff:127.0.0.1]:3000"), true, 1001, 525252},
	} {
		s, found, err := findProcSocket(strings.NewReader(tc.table), tc.own, tc.peer)
		if err != nil || found != tc.found || s.uid != tc.uid || s.inode != tc.inode {
			t.Errorf("%s: %+v found %v, %v; want found %v uid %d inode %d", tc.name, s, found, err, tc.found, tc.uid, tc.inode)
		}
	}
}

func TestParseProcLineRefusesBadRows(t *testing.T) {
	for _, line := range []string{
		"   0: 0100007F:9433 00000000:0000 0A",
		"   0: 0100007F 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
		"   0: 0100007:9433 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
		"   0: 0100007F:94330 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1",
		"   0: 0100007F:9433 00000000:0000 0A 00000000:00000000 00:00000000 00000000 x 0 1",
		"   0: 0100007F:9433 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 -1",
	} {
		if _, err := parseProcLine(line); err == nil {
			t.Errorf("%q: no error", line)
		}
	}
}
