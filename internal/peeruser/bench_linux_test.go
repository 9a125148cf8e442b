package peeruser

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"testing"

	"github.com/hearth-dev/hearth/internal/peeruser/peerusertest"
)

// BenchmarkOwner is the per-connection cost of the owner lookup with 10,
// 1,000 and 10,000 TCP connections open on loopback from another process
// (each has two sockets, so the kernel's table holds twice as many), for
// the netlink exact lookup Owner uses and the /proc/net/tcp fallback:
//
//	go test -run '^$' -bench Owner -benchtime 2000x ./internal/peeruser/
func BenchmarkOwner(b *testing.B) {
	raiseNoFile(b, 10_000+256)
	for _, n := range []int{10, 1_000, 10_000} {
		local, remote, closeAll := openConns(b, n)
		for _, name := range []string{"netlink", "procfs"} {
			lookup := lookups()[name]
			b.Run(fmt.Sprintf("conns=%d/%s", n, name), func(b *testing.B) {
				for b.Loop() {
					if _, err := lookup(local, remote); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		closeAll()
	}
}

// openConns opens n loopback connections from a child process (so that
// the client ends do not count against this process's open-file limit)
// and returns the ends of the last one as the accepting side sees them.
func openConns(b *testing.B, n int) (local, remote netip.AddrPort, closeAll func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	accepted := make(chan net.Conn, n)
	go func() {
		defer close(accepted)
		for range n {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	clientAddr, release := peerusertest.HoldN(b, nil, ln.Addr().String(), n)
	var conns []net.Conn
	var last net.Conn
	for c := range accepted {
		conns = append(conns, c)
		if c.RemoteAddr().String() == clientAddr {
			last = c
		}
	}
	if len(conns) != n || last == nil {
		b.Fatalf("accepted %d of %d connections (last one found: %v)", len(conns), n, last != nil)
	}
	local, remote = ends(last)
	return local, remote, func() {
		release()
		for _, c := range conns {
			c.Close()
		}
		ln.Close()
	}
}

// raiseNoFile raises the soft open-file limit to at least n (up to the
// hard limit), or skips.
func raiseNoFile(b *testing.B, n uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	lim.Cur = min(n, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < n {
		b.Skipf("cannot open %d files (RLIMIT_NOFILE %d): %v", n, lim.Cur, err)
	}
}

// BenchmarkAccept is a new loopback connection dialled and accepted, from
// a plain listener and from a Guard, side by side: the difference is what
// the same-user check adds per connection (a kept-alive connection pays it
// once, whatever number of requests it carries).
//
//	go test -run '^$' -bench Accept -count 6 ./internal/peeruser/ | benchstat -col /listener -
func BenchmarkAccept(b *testing.B) {
	for _, guarded := range []bool{false, true} {
		name := "listener=plain"
		if guarded {
			name = "listener=guarded"
		}
		b.Run(name, func(b *testing.B) {
			raw, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			ln := raw
			if guarded {
				if ln, err = Guard(raw, "bench", nil); err != nil {
					b.Fatal(err)
				}
			}
			defer ln.Close()
			for b.Loop() {
				c, err := net.Dial("tcp", raw.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				s, err := ln.Accept()
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
				c.Close()
			}
		})
	}
}
