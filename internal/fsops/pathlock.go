package fsops

import (
	"strings"
	"sync"
)

// pathLocks serializes mutations of one path (check, then replace) within
// this process. Its zero value is ready to use.
type pathLocks struct {
	mu sync.Mutex
	m  map[string]*pathLock
}

type pathLock struct {
	mu   sync.Mutex
	refs int
}

func (l *pathLocks) lock(key string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*pathLock{}
	}
	pl := l.m[key]
	if pl == nil {
		pl = &pathLock{}
		l.m[key] = pl
	}
	pl.refs++
	l.mu.Unlock()
	pl.mu.Lock()
	return func() {
		pl.mu.Unlock()
		l.mu.Lock()
		pl.refs--
		if pl.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
}

// pathKey is the lock key of a resolved path: upper-cased where names
// compare case-insensitively.
func pathKey(p string) string {
	if pathFold {
		return strings.ToUpper(p)
	}
	return p
}
