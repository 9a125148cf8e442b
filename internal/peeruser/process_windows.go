package peeruser

import "net/netip"

// heldBy compares the owning pid of the peer's row in the TCP table.
func heldBy(local, remote netip.AddrPort, pid int) (bool, error) {
	got, err := peerProcess(local, remote)
	if err != nil {
		return false, err
	}
	return int(got) == pid, nil
}
