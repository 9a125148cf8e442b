//go:build !linux && !windows

package peeruser

import "net/netip"

func heldBy(netip.AddrPort, netip.AddrPort, int) (bool, error) { return false, ErrUnsupported }
