package peeruser

import (
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

// Guarded wraps a listener so that Accept returns only connections whose
// peer is owned by the same account as this process. Any other connection
// — another account's, or one whose owner cannot be determined — gets a
// 403 Forbidden answer and is closed, and a log line names the other account
// (never what it sent). Build it with Guard.
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

// Accept waits for the next connection of the listener's own account;
// others are answered and closed in the background.
func (g *Guarded) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if g.admit(c) {
			return c, nil
		}
		select {
		case g.refusers <- struct{}{}:
			go func() {
				defer func() { <-g.refusers }()
				refuse(c)
			}()
		default:
			c.Close()
		}
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
