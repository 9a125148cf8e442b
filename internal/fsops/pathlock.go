package fsops

import (
	"path/filepath"
	"slices"
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

// gitShapeNames are the names whose folder git takes for a repository's
// own when they stand together in it (risk.Places' git-folder shape).
var gitShapeNames = []string{"HEAD", "objects", "refs", "commondir"}

// shapeKeys are the lock keys of the folders on p's way that a write of p
// could complete a git folder's shape in: each folder holding a path
// component named as one of gitShapeNames. Writes into one such folder
// take its key, in order, before their path's own lock, so one sees what
// another wrote before it checks (the write-time check matches the shape
// on disk); with only the path's lock, writes of HEAD, objects/… and
// refs/… at the same time could each find the others not there yet.
func shapeKeys(p string) []string {
	var keys []string
	for dir := filepath.Dir(p); dir != p; p, dir = dir, filepath.Dir(dir) {
		name := filepath.Base(p)
		for _, n := range gitShapeNames {
			if name == n || (pathFold && strings.EqualFold(name, n)) {
				keys = append(keys, "git-shape\x00"+pathKey(dir))
				break
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// lockAll takes the locks of keys in order and returns what releases them.
func (l *pathLocks) lockAll(keys []string) (unlock func()) {
	unlocks := make([]func(), 0, len(keys))
	for _, k := range keys {
		unlocks = append(unlocks, l.lock(k))
	}
	return func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
}
