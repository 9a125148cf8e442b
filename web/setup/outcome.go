package setup

import (
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/tunnel"
	"github.com/hearth-dev/hearth/web/session"
)

// outcome is what an action leaves for the next page of its session.
type outcome struct {
	result   *Result
	keySaved bool
	// checked is the typed tunnel-client path, hashed.
	checked *tunnel.Candidate
	// progress is Connect's.
	progress *progress
	at       time.Time
	seq      uint64
}

// Bounds of the one-shot outcomes kept.
const (
	maxOutcomes = 16
	outcomeTTL  = 10 * time.Minute
)

// outcomes holds each session's outcome of its last action until its
// next page: a command's output is too large for a flash message. It
// keeps a few, for a few minutes, in memory only.
type outcomes struct {
	mu  sync.Mutex
	m   map[*session.Session]outcome
	seq uint64
}

func (o *outcomes) put(s *session.Session, v outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[*session.Session]outcome{}
	}
	now := time.Now()
	var oldest *session.Session
	for k, e := range o.m {
		if now.Sub(e.at) > outcomeTTL {
			delete(o.m, k)
		} else if oldest == nil || e.seq < o.m[oldest].seq {
			oldest = k
		}
	}
	if _, ok := o.m[s]; !ok && len(o.m) >= maxOutcomes {
		delete(o.m, oldest)
	}
	o.seq++
	v.at, v.seq = now, o.seq
	o.m[s] = v
}

func (o *outcomes) pop(s *session.Session) (outcome, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	v, ok := o.m[s]
	delete(o.m, s)
	if !ok || time.Since(v.at) > outcomeTTL {
		return outcome{}, false
	}
	return v, true
}
