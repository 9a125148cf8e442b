package fsops

import (
	"io"
	"io/fs"
	"sync"
	"time"
)

// hashCacheSize bounds the hash cache; when full it is emptied.
const hashCacheSize = 256

// hashCache remembers whole-file hashes by path, size, modification time
// and (on Linux) status change time, so paging through a large file with
// read does not hash all of it for every page. A file rewritten within one
// tick of those times at the same size could be reported with its previous
// hash; that can only make a later write's expected_sha256 check fail,
// never pass wrongly, because writes hash the file themselves. Its zero
// value is ready to use.
type hashCache struct {
	mu sync.Mutex
	m  map[hashKey]string
}

type hashKey struct {
	path  string
	size  int64
	mtime time.Time
	ctime int64 // changeTime
}

func keyOf(path string, info fs.FileInfo) hashKey {
	return hashKey{path: path, size: info.Size(), mtime: info.ModTime(), ctime: changeTime(info)}
}

// cached returns the remembered SHA-256 of the file described by info, if
// any, reading nothing.
func (c *hashCache) cached(path string, info fs.FileInfo) (string, bool) {
	k := keyOf(path, info)
	c.mu.Lock()
	sha, ok := c.m[k]
	c.mu.Unlock()
	return sha, ok
}

// sum returns the SHA-256 of the file described by info, reading r only on
// a miss.
func (c *hashCache) sum(path string, info fs.FileInfo, r io.Reader) (string, error) {
	if sha, ok := c.cached(path, info); ok {
		return sha, nil
	}
	sha, err := hashReader(r)
	if err != nil {
		return "", err
	}
	k := keyOf(path, info)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= hashCacheSize {
		c.m = make(map[hashKey]string)
	}
	c.m[k] = sha
	c.mu.Unlock()
	return sha, nil
}
