// Package httpbound bounds what Hearth's loopback HTTP servers spend on
// requests: time (a deadline for the headers, another for the whole body,
// an idle timeout between requests) and memory (one body's size, how many
// bodies are held at once and how many bytes they hold together).
//
// Bodies are read by the Limiter itself, under the body deadline, into a
// buffer of exactly the declared length (or grown in bounded steps for a
// chunked body), and the handler is given that buffer. The bytes are
// reserved against the total before they are read and released when the
// handler returns; a request that would pass the total, or the count of
// requests held at once, is answered 503 with Retry-After at once instead
// of waiting or growing. When a large body ends and nothing else is held,
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
		if l.limits.WriteTimeout > 0 {
			bw := &boundedWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: l.limits.WriteTimeout}
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
		// A declared length is reserved whole before a byte is read; a
		// chunked body reserves as it grows.
		step := r.ContentLength
		if step < 0 {
			step = min(64<<10, l.limits.MaxBodyBytes)
		}
		if !l.admit(step) {
			l.busy(w, r)
			return
		}
		reserved := step
		defer func() { l.release(reserved) }()

		rc := http.NewResponseController(w)
		deadline := time.Now().Add(l.limits.BodyTimeout)
		// Errors are ignored: a writer without deadlines (a test
		// recorder) is still bounded by the server's ReadTimeout.
		_ = rc.SetReadDeadline(deadline)
		body, err := l.read(r.Body, r.ContentLength, &reserved)
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
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
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
}

// arm sets the write deadline one timeout from now. Errors are ignored: a
// writer without deadlines (a test recorder) has nothing to bound.
func (w *boundedWriter) arm() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout)) }

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

// read reads the whole body: into exactly n bytes when n is known, else
// growing in steps reserved as it goes (*reserved follows).
func (l *Limiter) read(body io.Reader, n int64, reserved *int64) ([]byte, error) {
	if n >= 0 {
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		// A body longer than declared is cut by net/http itself.
		return buf, nil
	}
	buf := make([]byte, 0, *reserved)
	for {
		if len(buf) == cap(buf) {
			grow := min(int64(cap(buf)), l.limits.MaxBodyBytes+1-int64(cap(buf)))
			if grow <= 0 {
				return nil, errTooLarge
			}
			if !l.grow(grow) {
				return nil, errBusy
			}
			*reserved += grow
			nb := make([]byte, len(buf), int64(cap(buf))+grow)
			copy(nb, buf)
			buf = nb
		}
		m, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if int64(len(buf)) > l.limits.MaxBodyBytes {
			return nil, errTooLarge
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// admit reserves n bytes for a new request, within both caps.
func (l *Limiter) admit(n int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.requests >= l.limits.MaxHeld || l.held+n > l.limits.MaxHeldBytes {
		return false
	}
	l.requests++
	l.reserve(n)
	return true
}

// grow reserves n more bytes for an admitted request.
func (l *Limiter) grow(n int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held+n > l.limits.MaxHeldBytes {
		return false
	}
	l.reserve(n)
	return true
}

func (l *Limiter) reserve(n int64) {
	l.held += n
	if n >= freeAbove {
		l.bigSinceFree = true
	}
}

// release gives back a request's reservation and, when a large body was
// held and nothing is held any more, hands memory back to the OS.
func (l *Limiter) release(n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held -= n
	l.requests--
	if l.held == 0 && l.bigSinceFree && !l.freeing {
		l.freeing = true
		wait := max(0, freeEvery-time.Since(l.lastFree))
		time.AfterFunc(wait, l.free)
	}
}

func (l *Limiter) free() {
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
