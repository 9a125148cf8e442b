// Package httpbound bounds what Hearth's loopback HTTP servers spend on
// requests: time (a deadline for the headers, another for the whole body,
// an idle timeout between requests) and memory (one body's size, how many
// bodies are held at once and how many bytes they hold together).
//
// Bodies are read by the Limiter itself, under the body deadline, in
// 64 KiB steps allocated as the bytes arrive (never past a declared
// length), and the handler is given what was read. Each step is reserved
// against the total before it is allocated, so a request holds about what
// it has sent, and released when the handler returns; a request whose next
// step would pass the total, or that would pass the count of requests held
// at once, is answered 503 with Retry-After at once instead of waiting. When a large body ends and nothing else is held,
// memory is handed back to the operating system (rate-limited), so that a
// burst of big or stalled bodies does not leave the process swollen.
package httpbound

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// Limits are the bounds of one listener.
type Limits struct {
	// MaxBodyBytes is the largest body one request may send (413 beyond).
	MaxBodyBytes int64
	// MaxHeldBytes bounds the body bytes held by all requests at once
	// (503 beyond).
	MaxHeldBytes int64
	// MaxHeld bounds the requests with a body held at once (503 beyond).
	MaxHeld int
	// HeaderTimeout bounds reading the request line and headers.
	HeaderTimeout time.Duration
	// BodyTimeout bounds reading the whole body, from the end of the
	// headers (408 and the connection closed beyond).
	BodyTimeout time.Duration
	// IdleTimeout closes a kept-alive connection idle this long.
	IdleTimeout time.Duration
	// WriteTimeout bounds each step of writing the answer: a client
	// that does not take writeChunk bytes of it within this long is cut
	// (the handler's writes fail and the connection is closed). It bounds
	// progress, not the handler's run time: a long call may take as long
	// as it likes before its first byte.
	WriteTimeout time.Duration
	// RetryAfter is the Retry-After of a 503.
	RetryAfter time.Duration
}

// The listeners' limits are fixed rather than config keys: they protect
// Hearth from a local program, and no legitimate client comes near them
// (README, "Request bounds").

// MCP is the MCP endpoint's: 4 MiB bodies (the go-sdk's own cap), at most
// 32 MiB held by at most 64 requests, a body within 30 s.
func MCP() Limits {
	return Limits{MaxBodyBytes: 4 << 20, MaxHeldBytes: 32 << 20, MaxHeld: 64,
		HeaderTimeout: 10 * time.Second, BodyTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		WriteTimeout: 30 * time.Second, RetryAfter: time.Second}
}

// Panel is the control panel's: its forms are small.
func Panel() Limits {
	return Limits{MaxBodyBytes: 1 << 20, MaxHeldBytes: 8 << 20, MaxHeld: 32,
		HeaderTimeout: 10 * time.Second, BodyTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		WriteTimeout: 30 * time.Second, RetryAfter: time.Second}
}

// Control is the tray control endpoint's: its requests have no body.
func Control() Limits {
	return Limits{MaxBodyBytes: 4 << 10, MaxHeldBytes: 64 << 10, MaxHeld: 8,
		HeaderTimeout: 5 * time.Second, BodyTimeout: 5 * time.Second, IdleTimeout: 30 * time.Second,
		WriteTimeout: 10 * time.Second, RetryAfter: time.Second}
}

// Rejection says why a request was refused before its handler ran.
type Rejection struct {
	Status int
	// Message is a short English sentence for the client.
	Message string
}

// RejectFunc writes a refusal. The MCP endpoint answers JSON-RPC errors;
// the default answers plain text.
type RejectFunc func(w http.ResponseWriter, r *http.Request, rej Rejection)

// Limiter enforces Limits on one listener.
type Limiter struct {
	limits Limits
	reject RejectFunc

	mu       sync.Mutex
	held     int64
	requests int
	// bigSinceFree records that a large body was held since memory was
	// last handed back.
	bigSinceFree bool
	lastFree     time.Time
	freeing      bool
	// spare holds full-size steps of ended requests for the next ones.
	spare [][]byte
}

// freeAbove is the body size from which the end of a request may hand
// memory back; freeEvery rate-limits it.
const (
	freeAbove = 256 << 10
	freeEvery = 2 * time.Second
)

// New returns a Limiter; reject may be nil (plain-text refusals).
func New(l Limits, reject RejectFunc) *Limiter {
	if reject == nil {
		reject = func(w http.ResponseWriter, _ *http.Request, rej Rejection) {
			http.Error(w, rej.Message, rej.Status)
		}
	}
	return &Limiter{limits: l, reject: reject}
}

// Server returns an http.Server serving h through the Limiter, with its
// header and idle timeouts. It sets no ReadTimeout: net/http cancels a
// request's context when that deadline passes under a running handler, and
// a long call (task.wait) must not be cut; the body deadline is set by
// Handler for the body alone.
func (l *Limiter) Server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           l.Handler(h),
		ReadHeaderTimeout: l.limits.HeaderTimeout,
		IdleTimeout:       l.limits.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
}

// Held reports the body bytes and requests held now.
func (l *Limiter) Held() (bytes int64, requests int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held, l.requests
}

// Handler reads each request's body under the Limits and hands next an
// identical, fully read body, and a writer whose every step is bounded by
// WriteTimeout.
func (l *Limiter) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if l.limits.WriteTimeout > 0 {
			bw := &boundedWriter{ResponseWriter: w, rc: rc, timeout: l.limits.WriteTimeout}
			// What net/http writes itself (a 100 Continue before the
			// body, the buffered rest of the answer after the handler)
			// is bounded too; without WriteTimeout on the server a
			// deadline left by an earlier request on the connection
			// would otherwise stay in force.
			bw.arm()
			defer bw.arm()
			w = bw
		}
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > l.limits.MaxBodyBytes {
			l.refuse(w, r, Rejection{http.StatusRequestEntityTooLarge, "request body larger than " + strconv.FormatInt(l.limits.MaxBodyBytes, 10) + " bytes"})
			return
		}
		// The first step is reserved before a byte is read (a small
		// declared body whole); the rest as the body arrives.
		step := int64(stepSize)
		if r.ContentLength > 0 {
			step = min(step, r.ContentLength)
		}
		step = min(step, l.limits.MaxBodyBytes)
		if !l.admit(step) {
			l.busy(w, r)
			return
		}
		reserved := step
		var steps [][]byte
		defer func() { l.release(reserved, steps) }()

		deadline := time.Now().Add(l.limits.BodyTimeout)
		// Errors are ignored: a writer without deadlines (a test
		// recorder) is still bounded by the server's ReadTimeout.
		_ = rc.SetReadDeadline(deadline)
		steps, n, err := l.read(r.Body, r.ContentLength, &reserved)
		_ = rc.SetReadDeadline(time.Time{})
		switch {
		case errors.Is(err, errBusy):
			l.busy(w, r)
			return
		case errors.Is(err, errTooLarge):
			l.refuse(w, r, Rejection{http.StatusRequestEntityTooLarge, "request body larger than " + strconv.FormatInt(l.limits.MaxBodyBytes, 10) + " bytes"})
			return
		case errors.Is(err, os.ErrDeadlineExceeded) || time.Now().After(deadline):
			w.Header().Set("Connection", "close")
			l.refuse(w, r, Rejection{http.StatusRequestTimeout, "request body not received within " + l.limits.BodyTimeout.String()})
			return
		case err != nil:
			w.Header().Set("Connection", "close")
			l.refuse(w, r, Rejection{http.StatusBadRequest, "request body could not be read"})
			return
		}
		r.Body = io.NopCloser(bodyReader(steps))
		r.ContentLength = n
		next.ServeHTTP(w, r)
	})
}

// writeChunk is the most one bounded write step hands the connection, so
// that a large answer taken steadily by a slow client is never cut, while
// one not taken at all is cut within WriteTimeout.
const writeChunk = 64 << 10

// boundedWriter sets the connection's write deadline afresh before each
// step of the answer. A failed step stays failed: a handler that ignores
// the error is not granted another WriteTimeout per write.
type boundedWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	err     error
	armed   time.Time // when arm last set the deadline
}

// arm sets the write deadline one timeout from now, unless it set one
// less than a 64th of the timeout ago: that deadline is at most so much
// earlier, never later, and a small answer is then armed once, not at the
// start, at its write and after the handler. Errors are ignored: a writer
// without deadlines (a test recorder) has nothing to bound.
func (w *boundedWriter) arm() {
	now := time.Now()
	if !w.armed.IsZero() && now.Sub(w.armed) < w.timeout/64 {
		return
	}
	w.armed = now
	_ = w.rc.SetWriteDeadline(now.Add(w.timeout))
}

func (w *boundedWriter) Write(b []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := 0
	for len(b) > 0 {
		step := b[:min(len(b), writeChunk)]
		w.arm()
		m, err := w.ResponseWriter.Write(step)
		n += m
		if err != nil {
			w.err = err
			return n, err
		}
		b = b[len(step):]
	}
	return n, nil
}

// FlushError flushes under a fresh deadline (http.ResponseController
// finds it first).
func (w *boundedWriter) FlushError() error {
	if w.err != nil {
		return w.err
	}
	w.arm()
	err := w.rc.Flush()
	if err != nil && !errors.Is(err, http.ErrNotSupported) {
		w.err = err
	}
	return err
}

// Flush is FlushError for writers that look for http.Flusher.
func (w *boundedWriter) Flush() { _ = w.FlushError() }

// Unwrap lets http.ResponseController reach the connection.
func (w *boundedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var (
	errBusy     = errors.New("too many bytes held")
	errTooLarge = errors.New("body too large")
)

// A body is read in steps of stepSize bytes (the first, or the last of a
// declared length, may be shorter), each allocated only when the one
// before is full: what a request holds follows what it has sent (at most
// one step ahead), so a slow sender of a large declared body holds little.
// Full-size steps of requests that ended are kept for the next ones (in
// all, never more than the held-bytes cap), so that bodies refused half
// way do not leave garbage behind for the collector to catch up with.
const stepSize = 64 << 10

// read reads the whole body into steps, each reserved before it is
// allocated (*reserved follows), and returns them (also on an error, for
// release to keep) and the body's length. n is the declared length, or -1.
func (l *Limiter) read(body io.Reader, n int64, reserved *int64) (steps [][]byte, got int64, err error) {
	cur := l.take(*reserved)
	for n < 0 || got < n {
		if len(cur) == cap(cur) {
			steps = append(steps, cur)
			size := int64(stepSize)
			if n >= 0 {
				size = min(size, n-got)
			} else if size = min(size, l.limits.MaxBodyBytes+1-got); size <= 0 {
				return steps, 0, errTooLarge
			}
			if !l.grow(size, *reserved+size) {
				return steps, 0, errBusy
			}
			*reserved += size
			cur = l.take(size)
		}
		m, rerr := body.Read(cur[len(cur):cap(cur)])
		cur = cur[:len(cur)+m]
		got += int64(m)
		if got > l.limits.MaxBodyBytes {
			return append(steps, cur), 0, errTooLarge
		}
		if errors.Is(rerr, io.EOF) {
			if n >= 0 && got < n {
				return append(steps, cur), 0, io.ErrUnexpectedEOF
			}
			break
		}
		if rerr != nil {
			return append(steps, cur), 0, rerr
		}
	}
	// A body longer than declared is cut by net/http itself.
	return append(steps, cur), got, nil
}

// bodyReader reads the steps of a body in order.
func bodyReader(steps [][]byte) io.Reader {
	if len(steps) == 1 {
		return bytes.NewReader(steps[0])
	}
	readers := make([]io.Reader, len(steps))
	for i, b := range steps {
		readers[i] = bytes.NewReader(b)
	}
	return io.MultiReader(readers...)
}

// take returns an empty step of size bytes: a kept one when it is a
// full-size step and one is kept.
func (l *Limiter) take(size int64) []byte {
	if size == stepSize {
		l.mu.Lock()
		if k := len(l.spare); k > 0 {
			b := l.spare[k-1]
			l.spare = l.spare[:k-1]
			l.mu.Unlock()
			return b[:0]
		}
		l.mu.Unlock()
	}
	return make([]byte, 0, size)
}

// admit reserves n bytes for a new request, within both caps.
func (l *Limiter) admit(n int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.requests >= l.limits.MaxHeld || l.held+n > l.limits.MaxHeldBytes {
		return false
	}
	l.requests++
	l.reserve(n, n)
	return true
}

// grow reserves n more bytes for an admitted request, which then holds
// total.
func (l *Limiter) grow(n, total int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held+n > l.limits.MaxHeldBytes {
		return false
	}
	l.reserve(n, total)
	return true
}

func (l *Limiter) reserve(n, total int64) {
	l.held += n
	if total >= freeAbove {
		l.bigSinceFree = true
	}
}

// release gives back a request's reservation, keeps its full-size steps
// for the next requests (its handler, if it ran, has returned: nothing
// reads them any more) and, when a large body was held and nothing is held
// any more, hands memory back to the OS.
func (l *Limiter) release(n int64, steps [][]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range steps {
		if cap(b) == stepSize {
			l.spare = append(l.spare, b)
		}
	}
	l.held -= n
	l.requests--
	if l.held == 0 && l.bigSinceFree && !l.freeing {
		l.freeing = true
		wait := max(0, freeEvery-time.Since(l.lastFree))
		time.AfterFunc(wait, l.free)
	}
}

func (l *Limiter) free() {
	l.mu.Lock()
	if l.held == 0 {
		l.spare = nil
	}
	l.mu.Unlock()
	debug.FreeOSMemory()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lastFree = time.Now()
	l.freeing = false
	l.bigSinceFree = false
}

func (l *Limiter) busy(w http.ResponseWriter, r *http.Request) {
	secs := max(1, int(l.limits.RetryAfter/time.Second))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	l.refuse(w, r, Rejection{http.StatusServiceUnavailable, "too many requests are being received at once; retry after " + strconv.Itoa(secs) + " s"})
}

func (l *Limiter) refuse(w http.ResponseWriter, r *http.Request, rej Rejection) {
	l.reject(w, r, rej)
}
