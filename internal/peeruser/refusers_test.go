package peeruser

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"
)

// TestGuardBoundsItsRefusers: while maxRefusers refused connections are
// being answered, the next refused one is closed at once without an
// answer (no goroutine, no descriptor held), and a connection of this
// account is still accepted.
func TestGuardBoundsItsRefusers(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	me := Account{ID: "me"}
	var admitted net.Addr
	g := &Guarded{Listener: raw, endpoint: "test", self: me, log: slog.New(slog.DiscardHandler),
		refusers: make(chan struct{}, 1),
		owner: func(c net.Conn) (Account, error) {
			if admitted != nil && c.RemoteAddr().String() == admitted.String() {
				return me, nil
			}
			return Account{}, errors.New("another account")
		}}
	defer g.Close()
	g.refusers <- struct{}{} // every refuser slot is busy

	refused, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer refused.Close()
	own, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	admitted = own.LocalAddr()
	got, err := g.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.RemoteAddr().String() != own.LocalAddr().String() {
		t.Fatalf("Accept returned %s, want %s", got.RemoteAddr(), own.LocalAddr())
	}
	// The refused connection was closed without the 403 answer (which
	// would wait for its first bytes): it reads EOF although it sent
	// something.
	if _, err := refused.Write([]byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Logf("write: %v", err)
	}
	refused.SetReadDeadline(time.Now().Add(30 * time.Second))
	b, err := io.ReadAll(refused)
	if len(b) != 0 {
		t.Fatalf("a refused connection past the bound got an answer: %q", b)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the refused connection was held open past the bound")
	}
	if len(g.refusers) != 1 {
		t.Fatalf("refuser slots in use: %d, want the 1 the test holds", len(g.refusers))
	}
}

// TestGuardSlowLookupDoesNotStallAccept: while the owner lookup of one
// connection is blocked, a connection accepted after it is decided and
// returned by Accept; the blocked one follows once its lookup ends.
func TestGuardSlowLookupDoesNotStallAccept(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	me := Account{ID: "me"}
	slow, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slowAddr := slow.LocalAddr().String()
	blocked := make(chan struct{})
	unblock := make(chan struct{})
	g := &Guarded{Listener: raw, endpoint: "test", self: me, log: slog.New(slog.DiscardHandler),
		refusers: make(chan struct{}, maxRefusers),
		owner: func(c net.Conn) (Account, error) {
			if c.RemoteAddr().String() == slowAddr {
				close(blocked)
				<-unblock // a lookup that does not answer
			}
			return me, nil
		}}
	defer g.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := g.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	select {
	case <-blocked:
	case <-time.After(30 * time.Second):
		t.Fatal("the first connection's owner was never looked up")
	}
	fast, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	select {
	case c := <-accepted:
		defer c.Close()
		if c.RemoteAddr().String() != fast.LocalAddr().String() {
			t.Fatalf("Accept returned %s while the lookup of %s was blocked, want %s", c.RemoteAddr(), slowAddr, fast.LocalAddr())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a connection was not accepted while another one's owner lookup was blocked")
	}
	close(unblock)
	select {
	case c := <-accepted:
		defer c.Close()
		if c.RemoteAddr().String() != slowAddr {
			t.Fatalf("Accept returned %s, want the slow one %s", c.RemoteAddr(), slowAddr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the slow connection was not accepted once its lookup ended")
	}
}

// TestGuardCloseEndsAccept: Close makes a waiting Accept return an error
// that says the listener is closed, as a plain listener's does.
func TestGuardCloseEndsAccept(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &Guarded{Listener: raw, endpoint: "test", self: Account{ID: "me"}, log: slog.New(slog.DiscardHandler),
		refusers: make(chan struct{}, maxRefusers),
		owner:    func(net.Conn) (Account, error) { return Account{ID: "me"}, nil }}
	errc := make(chan error, 1)
	go func() {
		_, err := g.Accept()
		errc <- err
	}()
	g.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Accept did not return after Close")
	}
	if _, err := g.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a later Accept: %v, want net.ErrClosed", err)
	}
}
