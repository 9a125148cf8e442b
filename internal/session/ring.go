package session

import (
	"context"
	"sync"
	"time"
)

// ring keeps the newest bytes of a session's output, addressed by offset
// from the start of the output: offset o is the o-th byte the program ever
// wrote, so a reader resumes where it stopped, and learns how much it lost
// when the ring has moved past it.
type ring struct {
	mu     sync.Mutex
	buf    []byte
	end    int64 // offset of the next byte written (total bytes written)
	closed bool  // the program's output has ended
	// changed is closed (and replaced) whenever bytes arrive or the output
	// ends, waking every waiting reader.
	changed chan struct{}
}

func newRing(size int) *ring {
	return &ring{buf: make([]byte, size), changed: make(chan struct{})}
}

// write appends p, overwriting the oldest bytes once the ring is full.
func (r *ring) write(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.buf)
	if len(p) > n {
		r.end += int64(len(p) - n)
		p = p[len(p)-n:]
	}
	for len(p) > 0 {
		at := int(r.end % int64(n))
		c := copy(r.buf[at:], p)
		p = p[c:]
		r.end += int64(c)
	}
	r.signal()
}

// close records that no more output will come.
func (r *ring) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	r.signal()
}

func (r *ring) signal() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// chunk is what one read returns.
type chunk struct {
	data []byte
	// start is the offset of data's first byte: later than the offset
	// asked for when the ring no longer holds it (lost = start - asked).
	start int64
	lost  int64
	end   int64 // output written so far
	ended bool  // no more output will come
}

// read returns up to max bytes from offset off (an offset past the end
// reads nothing; one before the oldest kept byte reads from the oldest).
func (r *ring) read(off int64, max int) chunk {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.readLocked(off, max)
}

func (r *ring) readLocked(off int64, max int) chunk {
	oldest := r.end - int64(len(r.buf))
	if oldest < 0 {
		oldest = 0
	}
	c := chunk{start: off, end: r.end, ended: r.closed}
	if off < oldest {
		c.start, c.lost = oldest, oldest-off
	}
	if c.start >= r.end {
		c.start = min(c.start, r.end)
		return c
	}
	n := int(min(r.end-c.start, int64(max)))
	c.data = make([]byte, n)
	size := int64(len(r.buf))
	for i := 0; i < n; {
		at := int((c.start + int64(i)) % size)
		i += copy(c.data[i:], r.buf[at:min(len(r.buf), at+n-i)])
	}
	return c
}

// wait blocks until ready reports true for the output after off, the
// output ends, the timeout passes or ctx ends; then it reads as read does.
// ready sees the bytes kept after off (at most max of them).
func (r *ring) wait(ctx context.Context, off int64, max int, timeout time.Duration, ready func(chunk) bool) chunk {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		r.mu.Lock()
		c := r.readLocked(off, max)
		changed := r.changed
		r.mu.Unlock()
		if c.ended || ready(c) {
			return c
		}
		select {
		case <-changed:
		case <-timer.C:
			return r.read(off, max)
		case <-ctx.Done():
			return r.read(off, max)
		}
	}
}
