package peeruser

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"
)

// ForbiddenBody is the body of the answer a refused connection gets.
const ForbiddenBody = "403 Forbidden: this Hearth serves only the account that runs it; a connection from another account (or one whose owner cannot be determined) is refused.\n"

// forbidden is the whole HTTP answer a refused connection gets (what it
// sent is never read as a request: it is discarded unparsed).
func forbidden() string {
	return "HTTP/1.1 403 Forbidden\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"X-Content-Type-Options: nosniff\r\n" +
		"Connection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(ForbiddenBody)) + "\r\n" +
		"\r\n" + ForbiddenBody
}

// Refusal bounds: a refused connection waits at most refuseLinger for its
// first bytes before it is answered, then what it sent is discarded for at
// most refuseLinger or refuseDrain bytes, whichever comes first.
const (
	refuseLinger = 2 * time.Second
	refuseDrain  = 64 << 10
)

// Log bounds: at most logBurst refusal lines per logWindow per listener;
// the next line logged says how many were left out.
const (
	logBurst  = 10
	logWindow = time.Minute
)

// maxRefusers bounds the refused connections being answered at once (each
// holds a goroutine and a descriptor for up to refuseLinger): past it, a
// refused connection is closed without an answer, so a flood of another
// account's connections cannot use up this process's descriptors.
const maxRefusers = 32

// maxDeciders bounds the owner lookups running at once. Lookups run off
// the accept loop, each connection on its own, so that one slow lookup
// (netlink's answer can take up to its receive timeout) does not hold up
// the connections accepted after it; past the bound, accepting waits for
// a lookup to finish.
const maxDeciders = 8

// Guarded wraps a listener so that Accept returns only connections whose
// peer is owned by the same account as this process. Any other connection
// — another account's, or one whose owner cannot be determined — gets a
// 403 Forbidden answer and is closed, and a log line names the other account
// (never what it sent). Build it with Guard.
//
// The first Accept starts a loop that accepts every connection of the
// listener and has its owner looked up apart (at most maxDeciders at
// once); Accept returns connections as they are admitted, in the order
// they are decided. Nothing reads a connection before its verdict.
type Guarded struct {
	net.Listener
	endpoint string
	self     Account
	owner    func(net.Conn) (Account, error)
	log      *slog.Logger
	// refusers holds a slot per refused connection being answered.
	refusers chan struct{}

	mu         sync.Mutex
	windowEnd  time.Time
	logged     int
	suppressed int

	ready     sync.Once
	loop      sync.Once
	closeOnce sync.Once
	// deciders holds a slot per connection being decided or handed to
	// Accept; admitted carries the admitted ones to Accept, errs the
	// listener's errors; done is closed by Close.
	deciders chan struct{}
	admitted chan net.Conn
	errs     chan error
	done     chan struct{}
}

// Guard wraps ln (a TCP listener; endpoint names it in log lines, such as
// "mcp"). It fails when this process's own account cannot be read.
func Guard(ln net.Listener, endpoint string, log *slog.Logger) (*Guarded, error) {
	me, err := Self()
	if err != nil {
		return nil, fmt.Errorf("guard the %s listener: %w", endpoint, err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Guarded{Listener: ln, endpoint: endpoint, self: me, owner: ConnOwner, log: log,
		refusers: make(chan struct{}, maxRefusers)}, nil
}

// Self is the account the listener admits.
func (g *Guarded) Self() Account { return g.self }

func (g *Guarded) init() {
	g.ready.Do(func() {
		g.deciders = make(chan struct{}, maxDeciders)
		g.admitted = make(chan net.Conn)
		g.errs = make(chan error)
		g.done = make(chan struct{})
	})
}

// Accept waits for the next connection of the listener's own account;
// others are answered and closed in the background.
func (g *Guarded) Accept() (net.Conn, error) {
	g.init()
	g.loop.Do(func() { go g.acceptLoop() })
	select {
	case c := <-g.admitted:
		return c, nil
	case err := <-g.errs:
		return nil, err
	case <-g.done:
		return nil, &net.OpError{Op: "accept", Net: g.Addr().Network(), Addr: g.Addr(), Err: net.ErrClosed}
	}
}

// Close closes the listener and stops its accept loop; connections
// decided but not yet taken by Accept are closed.
func (g *Guarded) Close() error {
	g.init()
	g.closeOnce.Do(func() { close(g.done) })
	return g.Listener.Close()
}

// acceptLoop accepts connections and has each one decided apart. An
// error of the listener is handed to Accept (net/http backs off on a
// temporary one and calls again); the loop ends when the listener is
// closed.
func (g *Guarded) acceptLoop() {
	defer g.closeOnce.Do(func() { close(g.done) })
	for {
		select {
		case g.deciders <- struct{}{}:
		case <-g.done:
			return
		}
		c, err := g.Listener.Accept()
		if err != nil {
			<-g.deciders
			select {
			case g.errs <- err:
			case <-g.done:
				return
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		go g.decide(c)
	}
}

// decide looks up c's owner and hands c to Accept, or answers it with the
// refusal (within the bound of refusers at once) and closes it.
func (g *Guarded) decide(c net.Conn) {
	if g.admit(c) {
		defer func() { <-g.deciders }()
		select {
		case g.admitted <- c:
		case <-g.done:
			c.Close()
		}
		return
	}
	<-g.deciders
	select {
	case g.refusers <- struct{}{}:
		defer func() { <-g.refusers }()
		refuse(c)
	default:
		c.Close()
	}
}

// admit decides for one connection, before anything is read from it.
func (g *Guarded) admit(c net.Conn) bool {
	acc, err := g.owner(c)
	switch {
	case err != nil:
		g.refused("refused a loopback connection: its owner cannot be determined", "peer", c.RemoteAddr().String(), "err", err)
		return false
	case acc.ID != g.self.ID:
		g.refused("refused a loopback connection from another account", "account", Named(acc).String(), "peer", c.RemoteAddr().String())
		return false
	}
	return true
}

// refused logs one refusal, within the log bounds.
func (g *Guarded) refused(msg string, args ...any) {
	g.mu.Lock()
	now := time.Now()
	if now.After(g.windowEnd) {
		g.windowEnd, g.logged = now.Add(logWindow), 0
	}
	if g.logged >= logBurst {
		g.suppressed++
		g.mu.Unlock()
		return
	}
	g.logged++
	left := g.suppressed
	g.suppressed = 0
	g.mu.Unlock()
	args = append(args, "endpoint", g.endpoint, "serves", g.self.String())
	if left > 0 {
		args = append(args, "refusals_not_logged_before", left)
	}
	g.log.Warn(msg, args...)
}

// refuse answers c with the 403 answer and closes it. The answer waits
// for the peer's first bytes (discarded unparsed; the decision was made
// without them): an HTTP client that gets an answer before it has sent
// its request takes it for a stray and reports a broken connection
// instead of the 403. What follows is discarded too while the answer
// drains, so that closing does not reset the connection under it.
func refuse(c net.Conn) {
	defer c.Close()
	var first [512]byte
	if c.SetReadDeadline(time.Now().Add(refuseLinger)) == nil {
		c.Read(first[:])
	}
	if err := c.SetDeadline(time.Now().Add(refuseLinger)); err != nil {
		return
	}
	if _, err := io.WriteString(c, forbidden()); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		if cw.CloseWrite() == nil {
			io.Copy(io.Discard, io.LimitReader(c, refuseDrain))
		}
	}
}
