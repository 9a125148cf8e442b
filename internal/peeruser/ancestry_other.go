//go:build !linux && !windows

package peeruser

import "net/netip"

func peerPIDs(netip.AddrPort, netip.AddrPort) ([]int, error) { return nil, ErrUnsupported }

func descendsFrom(int, int) (bool, error) { return false, ErrUnsupported }

// AdoptOrphans does nothing here: only Linux has child subreapers.
func AdoptOrphans() error { return nil }
