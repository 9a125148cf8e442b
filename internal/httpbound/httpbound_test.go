package httpbound

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// serve runs l over a handler that echoes the body's length and SHA-less
// content back, on a real loopback listener.
func serve(t *testing.T, l *Limiter, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := l.Server(h)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func echo(calls *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Write(b)
	})
}

// stall opens a connection that declares length bytes and sends only sent.
func stall(t *testing.T, addr string, length, sent int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", length)
	c.Write(bytes.Repeat([]byte("a"), sent))
	return c
}

func waitHeld(t *testing.T, l *Limiter, requests int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, n := l.Held(); n == requests {
			return
		}
		if time.Now().After(deadline) {
			_, n := l.Held()
			t.Fatalf("held requests = %d, want %d", n, requests)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func testLimits() Limits {
	return Limits{MaxBodyBytes: 1000, MaxHeldBytes: 1500, MaxHeld: 3,
		HeaderTimeout: 10 * time.Second, BodyTimeout: time.Hour, IdleTimeout: time.Minute, RetryAfter: 3 * time.Second}
}

func TestBodyPassedOnWhole(t *testing.T) {
	var calls atomic.Int32
	l := New(testLimits(), nil)
	addr := serve(t, l, echo(&calls))
	body := strings.Repeat("x", 999)
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(got) != body {
		t.Fatalf("status %d, %d bytes back", resp.StatusCode, len(got))
	}
	// A chunked body (no declared length) too.
	resp, err = http.Post("http://"+addr+"/", "application/json", io.MultiReader(strings.NewReader(body[:500]), strings.NewReader(body[500:])))
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(got) != body {
		t.Fatalf("chunked: status %d, %d bytes back", resp.StatusCode, len(got))
	}
	if b, n := l.Held(); b != 0 || n != 0 {
		t.Fatalf("after the requests: %d bytes and %d requests held", b, n)
	}
}

func TestStalledBodyCutAtDeadline(t *testing.T) {
	var calls atomic.Int32
	lim := testLimits()
	lim.BodyTimeout = 300 * time.Millisecond
	l := New(lim, nil)
	addr := serve(t, l, echo(&calls))
	c := stall(t, addr, 1000, 10)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body (the deadline did not cut it): %v", err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
	if calls.Load() != 0 {
		t.Fatal("the handler ran on a body that never finished")
	}
	waitHeld(t, l, 0)
	if b, _ := l.Held(); b != 0 {
		t.Fatalf("%d bytes still held after the cut", b)
	}
}

func TestHeldBytesCapAnswers503(t *testing.T) {
	var calls atomic.Int32
	l := New(testLimits(), nil)
	addr := serve(t, l, echo(&calls))
	stall(t, addr, 900, 100)
	waitHeld(t, l, 1)
	// 900 + 700 > 1500: refused at once, without reading.
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(strings.Repeat("y", 700)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "3" {
		t.Fatalf("status %d, Retry-After %q; want 503 and 3", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// What fits is still served.
	resp, err = http.Post("http://"+addr+"/", "application/json", strings.NewReader(strings.Repeat("y", 500)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("a body within the cap: status %d", resp.StatusCode)
	}
}

func TestChunkedBodyCountsAsItGrows(t *testing.T) {
	var calls atomic.Int32
	lim := testLimits()
	lim.MaxBodyBytes = 1 << 20
	lim.MaxHeldBytes = 200 << 10
	l := New(lim, nil)
	addr := serve(t, l, echo(&calls))
	// A chunked body of 300 KiB passes the 200 KiB held cap while it
	// grows: refused, though no length was declared.
	resp, err := http.Post("http://"+addr+"/", "application/json", io.MultiReader(bytes.NewReader(make([]byte, 300<<10))))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", resp.StatusCode)
	}
	waitHeld(t, l, 0)
}

func TestHeldRequestsCapAnswers503(t *testing.T) {
	var calls atomic.Int32
	l := New(testLimits(), nil)
	addr := serve(t, l, echo(&calls))
	for range 3 {
		stall(t, addr, 100, 1)
	}
	waitHeld(t, l, 3)
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("status %d, want 503 with Retry-After", resp.StatusCode)
	}
	// A request without a body is not held and still served.
	resp, err = http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET: status %d", resp.StatusCode)
	}
}

func TestBodyTooLarge(t *testing.T) {
	var calls atomic.Int32
	l := New(testLimits(), nil)
	addr := serve(t, l, echo(&calls))
	for name, body := range map[string]io.Reader{
		"declared": strings.NewReader(strings.Repeat("z", 1001)),
		"chunked":  io.MultiReader(strings.NewReader(strings.Repeat("z", 1001))),
	} {
		resp, err := http.Post("http://"+addr+"/", "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: status %d, want 413", name, resp.StatusCode)
		}
	}
	if calls.Load() != 0 {
		t.Fatal("the handler ran on a body over the cap")
	}
}

func TestRejectFuncWritesRefusals(t *testing.T) {
	var calls atomic.Int32
	var got Rejection
	l := New(testLimits(), func(w http.ResponseWriter, _ *http.Request, rej Rejection) {
		got = rej
		w.WriteHeader(rej.Status)
		io.WriteString(w, "custom")
	})
	addr := serve(t, l, echo(&calls))
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(strings.Repeat("z", 1001)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "custom" || got.Status != http.StatusRequestEntityTooLarge || got.Message == "" {
		t.Fatalf("body %q, rejection %+v", b, got)
	}
}

func TestIdleConnectionClosed(t *testing.T) {
	var calls atomic.Int32
	lim := testLimits()
	lim.IdleTimeout = 200 * time.Millisecond
	l := New(lim, nil)
	addr := serve(t, l, echo(&calls))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("an idle kept-alive connection was not closed by the server: %v", err)
	}
}

// TestUnreadAnswerCutWithinWriteTimeout: a client that sends a request
// whose answer is large and never reads it does not hold its request slot
// (nor the handler) past WriteTimeout; the next request is served.
func TestUnreadAnswerCutWithinWriteTimeout(t *testing.T) {
	lim := testLimits()
	lim.MaxHeld = 1
	lim.WriteTimeout = 300 * time.Millisecond
	l := New(lim, nil)
	writeErr := make(chan error, 1)
	var calls atomic.Int32
	addr := serve(t, l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 {
			io.WriteString(w, "served")
			return
		}
		// Far more than the loopback socket buffers hold.
		chunk := make([]byte, 1<<20)
		for range 256 {
			if _, err := w.Write(chunk); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}))
	c := stall(t, addr, 2, 2) // a whole small body; the answer is never read
	waitHeld(t, l, 1)
	select {
	case err := <-writeErr:
		if err == nil {
			t.Fatal("256 MiB were written to a client that reads nothing")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the handler's writes to a client that reads nothing were never cut")
	}
	waitHeld(t, l, 0)
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "served" {
		t.Fatalf("the next request: status %d, body %q", resp.StatusCode, b)
	}
	c.Close()
}

// TestSlowReaderGetsWholeAnswer: the write bound is on progress, not on
// the whole answer: a client that reads a large answer slowly but steadily
// gets all of it, though that takes longer than WriteTimeout, and a
// handler that waits longer than WriteTimeout before its first byte is
// not cut. Both ends' socket buffers are kept small, so that the kernel
// lets the writer go on as soon as the reader has taken a little (with
// the default, autotuned loopback buffers a blocked write is woken only
// once megabytes are drained).
func TestSlowReaderGetsWholeAnswer(t *testing.T) {
	lim := testLimits()
	lim.WriteTimeout = 2 * time.Second
	l := New(lim, nil)
	const size = 16 << 20
	release := make(chan struct{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := l.Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // a long call: no byte written yet
		if _, err := w.Write(make([]byte, size)); err != nil {
			t.Errorf("server write: %v", err)
		}
	}))
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.(*net.TCPConn).SetWriteBuffer(64 << 10)
		}
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(64 << 10)
		}
		return c, err
	}}}
	defer client.CloseIdleConnections()
	resp := make(chan *http.Response, 1)
	errc := make(chan error, 1)
	go func() {
		r, err := client.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			errc <- err
			return
		}
		resp <- r
	}()
	// Hold the handler past the write timeout before it writes (a lower
	// bound: a longer pause only makes the case stronger).
	time.Sleep(lim.WriteTimeout + lim.WriteTimeout/2)
	close(release)
	var r *http.Response
	select {
	case r = <-resp:
	case err := <-errc:
		t.Fatal(err)
	}
	defer r.Body.Close()
	got := 0
	buf := make([]byte, 64<<10)
	start := time.Now()
	for {
		n, err := io.ReadFull(r.Body, buf)
		got += n
		if err == io.EOF || err == io.ErrUnexpectedEOF && got == size {
			break
		}
		if err != nil {
			t.Fatalf("after %d of %d bytes: %v", got, size, err)
		}
		// 256 pauses of 10 ms: the whole read takes longer than
		// WriteTimeout, each step far less.
		time.Sleep(10 * time.Millisecond)
	}
	if got != size {
		t.Fatalf("got %d bytes, want %d", got, size)
	}
	if took := time.Since(start); took <= lim.WriteTimeout {
		t.Fatalf("the read took %s, not longer than the write timeout: the case was not made", took)
	}
}

// TestSlowLargeSendersHoldOnlyWhatTheySent: senders that declare a body
// of the largest size and trickle it hold about what they sent, not what
// they declared, so a small request beside them is served, not 503. A
// sender whose body then arrives whole is still passed it intact.
func TestSlowLargeSendersHoldOnlyWhatTheySent(t *testing.T) {
	var calls atomic.Int32
	lim := testLimits()
	lim.MaxBodyBytes = 4 << 20
	lim.MaxHeldBytes = 8 << 20 // two declared 4 MiB bodies reserved whole would fill it
	lim.MaxHeld = 16
	l := New(lim, nil)
	addr := serve(t, l, echo(&calls))
	const senders = 8
	var conns []net.Conn
	for range senders {
		conns = append(conns, stall(t, addr, 4<<20, 100))
	}
	waitHeld(t, l, senders)
	// Each trickles a little more.
	for _, c := range conns {
		c.Write(bytes.Repeat([]byte("b"), 1000))
	}
	if b, _ := l.Held(); b > senders*64<<10 {
		t.Fatalf("%d senders of 1,100 bytes each hold %d bytes", senders, b)
	}
	resp, err := http.Post("http://"+addr+"/", "application/json", strings.NewReader(`{"small":true}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(got) != `{"small":true}` {
		t.Fatalf("a small request beside %d slow senders: status %d, body %q", senders, resp.StatusCode, got)
	}
	// One sender finishes its 4 MiB body: it is read whole, across steps.
	c := conns[0]
	rest := make([]byte, 4<<20-1100)
	for i := range rest {
		rest[i] = byte('c' + i%7)
	}
	go c.Write(rest)
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	r, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	echoed, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(bytes.Repeat([]byte("a"), 100), bytes.Repeat([]byte("b"), 1000)...), rest...)
	if r.StatusCode != 200 || !bytes.Equal(echoed, want) {
		t.Fatalf("the finished 4 MiB body: status %d, %d bytes back (equal: %v)", r.StatusCode, len(echoed), bytes.Equal(echoed, want))
	}
}

// TestKeptStepsWithinHeldCap: the steps kept for reuse never pass the
// held-bytes cap, are reused, and are let go once nothing is held.
func TestKeptStepsWithinHeldCap(t *testing.T) {
	var calls atomic.Int32
	lim := testLimits()
	lim.MaxBodyBytes = 1 << 20
	lim.MaxHeldBytes = 512 << 10
	lim.MaxHeld = 16
	l := New(lim, nil)
	addr := serve(t, l, echo(&calls))
	kept := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.spare)
	}
	for range 3 {
		for _, size := range []int{300 << 10, 700 << 10, 1 << 20} {
			resp, err := http.Post("http://"+addr+"/", "application/json", bytes.NewReader(make([]byte, size)))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if want := map[bool]int{true: 200, false: 503}[size <= 512<<10]; resp.StatusCode != want {
				t.Fatalf("%d bytes: status %d, want %d", size, resp.StatusCode, want)
			}
			if k := kept(); k*stepSize > int(lim.MaxHeldBytes) {
				t.Fatalf("%d steps of %d bytes kept, past the %d-byte cap", k, stepSize, lim.MaxHeldBytes)
			}
		}
	}
	// Nothing is held now: the kept steps are let go with the memory.
	deadline := time.Now().Add(30 * time.Second)
	for kept() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d steps still kept with nothing held", kept())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// deadlineRecorder records the write deadlines set on it.
type deadlineRecorder struct {
	http.ResponseWriter
	deadlines []time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

// TestArmSetsTheDeadlineOnceForAQuickAnswer: the arms of one quick answer
// (at the start, at its write, after the handler) set the write deadline
// once; a write after a 64th of the timeout sets it afresh, one whole
// timeout from then, so no deadline is ever later than a timeout after
// the write it bounds, nor earlier than 63/64 of one.
func TestArmSetsTheDeadlineOnceForAQuickAnswer(t *testing.T) {
	rec := &deadlineRecorder{ResponseWriter: httptest.NewRecorder()}
	const timeout = 640 * time.Millisecond
	w := &boundedWriter{ResponseWriter: rec, rc: http.NewResponseController(rec), timeout: timeout}
	start := time.Now()
	w.arm()
	if _, err := w.Write([]byte("answer")); err != nil {
		t.Fatal(err)
	}
	w.arm()
	if len(rec.deadlines) != 1 || rec.deadlines[0].Before(start.Add(timeout)) {
		t.Fatalf("deadlines %v for one quick answer, want one at least %v after %v", rec.deadlines, timeout, start)
	}
	time.Sleep(timeout/64 + 5*time.Millisecond)
	before := time.Now()
	if _, err := w.Write([]byte("more")); err != nil {
		t.Fatal(err)
	}
	if len(rec.deadlines) != 2 || rec.deadlines[1].Before(before.Add(timeout)) {
		t.Fatalf("deadlines %v: a write after a 64th of the timeout must set a new one at least %v after %v", rec.deadlines, timeout, before)
	}
}
