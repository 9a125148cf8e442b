package peeruser

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/peeruser/peerusertest"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// guardedServer serves a counting handler behind Guard on addr; setup,
// when given, changes the Guard before it serves.
func guardedServer(t *testing.T, addr string, setup func(*Guarded)) (url string, served *atomic.Int64, logs *syncBuffer, g *Guarded) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	logs = &syncBuffer{}
	g, err = Guard(ln, "test", slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(g)
	}
	served = &atomic.Int64{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "served")
	})}
	go srv.Serve(g)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/", served, logs, g
}

// waitFor polls cond with a generous deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGuardRefusesAnotherAccount: a client process of another account
// gets 403 and the handler never runs; the log line names the account and
// nothing of what it sent. The same client as this process's account is
// served. IPv4 and IPv6.
func TestGuardRefusesAnotherAccount(t *testing.T) {
	cred := peerusertest.Other(t)
	const secret = "request-body-that-must-not-be-logged"
	for _, addr := range loopbacks(t) {
		url, served, logs, _ := guardedServer(t, addr, nil)
		a := peerusertest.Request(t, cred, "POST", url, secret, "Content-Type=text/plain")
		if a.Status != http.StatusForbidden || a.Body != ForbiddenBody {
			t.Errorf("%s: another account got %+v, want 403", addr, a)
		}
		if n := served.Load(); n != 0 {
			t.Errorf("%s: the handler ran %d times for another account", addr, n)
		}
		log := logs.String()
		want := fmt.Sprintf("uid %d", peerusertest.Nobody)
		if !strings.Contains(log, "refused a loopback connection from another account") || !strings.Contains(log, want) {
			t.Errorf("%s: the log does not name %s: %s", addr, want, log)
		}
		if strings.Contains(log, secret) {
			t.Errorf("%s: the log holds what the other account sent: %s", addr, log)
		}

		a = peerusertest.Request(t, nil, "POST", url, "mine", "Content-Type=text/plain")
		if a.Status != http.StatusOK || a.Body != "served" || served.Load() != 1 {
			t.Errorf("%s: this account got %+v (handler ran %d times), want 200 served", addr, a, served.Load())
		}
	}
}

// TestGuardDecidesBeforeAnyByte: a connection of another account that
// sends nothing at all is refused too (the decision needs no byte of the
// request), and Accept never hands it to the server.
func TestGuardDecidesBeforeAnyByte(t *testing.T) {
	cred := peerusertest.Other(t)
	url, served, logs, _ := guardedServer(t, "127.0.0.1:0", nil)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	client, release := peerusertest.Hold(t, cred, addr)
	waitFor(t, "the refusal of a silent connection", func() bool { return strings.Contains(logs.String(), client) })
	release()
	if served.Load() != 0 {
		t.Fatal("the handler ran")
	}
}

// TestGuardRefusesUndeterminedOwner: a connection whose owner cannot be
// found (its client closed it before it was accepted, so no process holds
// that end) is refused, and the log says why — even though this test may
// run as root, whose uid 0 the kernel reports for such sockets.
func TestGuardRefusesUndeterminedOwner(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	g, err := Guard(raw, "test", slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := c.LocalAddr().String()
	c.Close()
	// A second connection, kept open, is this account's: Accept skips the
	// first and returns it.
	keep, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	got, err := g.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if got.RemoteAddr().String() != keep.LocalAddr().String() {
		t.Fatalf("Accept returned %s, want the open connection %s", got.RemoteAddr(), keep.LocalAddr())
	}
	// Connections are decided apart: the refusal may be logged after the
	// other one was accepted.
	waitFor(t, "the refusal's log line", func() bool {
		log := logs.String()
		return strings.Contains(log, "its owner cannot be determined") && strings.Contains(log, closedAddr)
	})
}

// TestGuardBoundsItsLog: a flood of refused connections writes at most
// logBurst lines per window; the next line logged counts the rest.
func TestGuardBoundsItsLog(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	g, err := Guard(raw, "test", slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	const flood = logBurst + 5
	for range flood {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	keep, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	got, err := g.Accept()
	if err != nil {
		t.Fatal(err)
	}
	got.Close()
	// Connections are decided apart: wait until all of the flood was, and
	// the lines counted as logged are written (a line is written after its
	// count, outside the lock).
	waitFor(t, "every refusal of the flood", func() bool {
		g.mu.Lock()
		counted := g.logged+g.suppressed == flood
		g.mu.Unlock()
		return counted && strings.Count(logs.String(), "\n") >= logBurst
	})
	if n := strings.Count(logs.String(), "\n"); n != logBurst {
		t.Fatalf("%d log lines for %d refusals, want %d:\n%s", n, flood, logBurst, logs.String())
	}
	g.mu.Lock()
	g.windowEnd = time.Now() // the window has passed
	g.mu.Unlock()
	g.refused("one more")
	if !strings.Contains(logs.String(), fmt.Sprintf("refusals_not_logged_before=%d", flood-logBurst)) {
		t.Fatalf("the next line does not count the left-out ones:\n%s", logs.String())
	}
}

// TestGuardLooksUpOncePerConnection: a kept-alive connection carrying many
// requests costs one owner lookup, not one per request.
func TestGuardLooksUpOncePerConnection(t *testing.T) {
	var lookups atomic.Int64
	url, served, _, _ := guardedServer(t, "127.0.0.1:0", func(g *Guarded) {
		g.owner = func(c net.Conn) (Account, error) { lookups.Add(1); return ConnOwner(c) }
	})
	client := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	const requests = 50
	for range requests {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if served.Load() != requests || lookups.Load() != 1 {
		t.Fatalf("%d requests served with %d owner lookups, want %d with 1", served.Load(), lookups.Load(), requests)
	}
}
