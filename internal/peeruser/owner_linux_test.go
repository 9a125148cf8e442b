package peeruser

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"testing"

	"github.com/hearth-dev/hearth/internal/peeruser/peerusertest"
)

// loopbacks are the listen addresses every test runs on: IPv4 and IPv6.
func loopbacks(t *testing.T) []string {
	addrs := []string{"127.0.0.1:0"}
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		ln.Close()
		addrs = append(addrs, "[::1]:0")
	} else {
		t.Logf("no IPv6 loopback here (%v): IPv4 only", err)
	}
	return addrs
}

// lookups are the two ways Owner finds the uid on Linux.
func lookups() map[string]func(local, remote netip.AddrPort) (uint32, error) {
	return map[string]func(local, remote netip.AddrPort) (uint32, error){"netlink": diagUID, "procfs": procUID}
}

// TestOwnSocketUID: a connection of this process is owned by this
// process's uid, found by netlink and by /proc, on IPv4 and IPv6; the
// accepting side's own socket (the same four numbers the other way round)
// is not mistaken for it.
func TestOwnSocketUID(t *testing.T) {
	for _, addr := range loopbacks(t) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer server.Close()
		local, remote := ends(server)
		for name, lookup := range lookups() {
			uid, err := lookup(local, remote)
			if err != nil || uid != uint32(os.Geteuid()) {
				t.Errorf("%s %s: uid %d, %v; want %d", addr, name, uid, err, os.Geteuid())
			}
		}
		got, err := ConnOwner(server)
		me, _ := Self()
		if err != nil || got.ID != me.ID {
			t.Errorf("%s: ConnOwner = %v, %v; want %v", addr, got, err, me)
		}
	}
}

// TestOtherAccountSocketUID: a connection held by a process of another
// account (uid 65534) is reported as that uid by both lookups, on IPv4 and
// IPv6.
func TestOtherAccountSocketUID(t *testing.T) {
	cred := peerusertest.Other(t)
	for _, addr := range loopbacks(t) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		_, release := peerusertest.Hold(t, cred, ln.Addr().String())
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		local, remote := ends(server)
		for name, lookup := range lookups() {
			uid, err := lookup(local, remote)
			if err != nil || uid != peerusertest.Nobody {
				t.Errorf("%s %s: uid %d, %v; want %d", addr, name, uid, err, peerusertest.Nobody)
			}
		}
		got, err := ConnOwner(server)
		if err != nil || got.ID != fmt.Sprintf("uid %d", peerusertest.Nobody) {
			t.Errorf("%s: ConnOwner = %v, %v", addr, got, err)
		}
		server.Close()
		release()
	}
}

// TestClosedPeerHasNoOwner: once the peer has closed its end, no process
// holds it (the kernel reports such a socket with uid 0), so both lookups
// answer ErrNotFound rather than an owner — even when this process is
// root, whose uid 0 it would otherwise match.
func TestClosedPeerHasNoOwner(t *testing.T) {
	for _, addr := range loopbacks(t) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer server.Close()
		client.Close()
		local, remote := ends(server)
		for name, lookup := range lookups() {
			if uid, err := lookup(local, remote); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s %s: closed peer: uid %d, %v; want ErrNotFound", addr, name, uid, err)
			}
		}
	}
}

// TestNoSuchConnection: four numbers no socket has are not found.
func TestNoSuchConnection(t *testing.T) {
	local := netip.MustParseAddrPort("127.0.0.1:1")
	remote := netip.MustParseAddrPort("127.0.0.1:2")
	for name, lookup := range lookups() {
		if uid, err := lookup(local, remote); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: uid %d, %v; want ErrNotFound", name, uid, err)
		}
	}
}

// TestProbe: doctor's self-test admits this process's account.
func TestProbe(t *testing.T) {
	got, err := Probe()
	me, _ := Self()
	if err != nil || got.ID != me.ID {
		t.Fatalf("Probe = %v, %v; want %v", got, err, me)
	}
}

// TestListenerIsNotAPeer: asked for a connection whose peer end would be
// a listening address, the kernel's lookup may answer with the listener
// itself (its own socket, owned by this account); that is no connection
// and must not be taken for its owner.
func TestListenerIsNotAPeer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	listening := ln.Addr().(*net.TCPAddr).AddrPort()
	for name, lookup := range lookups() {
		if uid, err := lookup(netip.MustParseAddrPort("127.0.0.1:1"), listening); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: uid %d, %v; want ErrNotFound", name, uid, err)
		}
	}
}

// ipv6PIDsUnknown: Linux knows the holder of every socket.
func ipv6PIDsUnknown() bool { return false }
