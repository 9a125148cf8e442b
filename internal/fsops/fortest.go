package fsops

import (
	"io/fs"
	"os"
)

// seams are the points where the package's own tests step into resolving
// a path (set by package fsops's tests through setSeams); all are nil in
// the program.
type seams struct {
	// look runs just before realPathInfo looks (lstat) at a path the walk
	// found missing (tests make the file there, as a concurrent write
	// would).
	look func(p string)
	// rechecked runs when the walk cache answered p by one statx
	// (walkCache.recheck) instead of a walk.
	rechecked func(p string)
}

// processSeams is the package's one set of seams. What they reach (path
// resolution and the walk cache) is process-wide, so they are too: a test
// sets them only while no other test of the package runs (never in a
// parallel test).
var processSeams seams

// lstat is os.Lstat, after the look seam.
func (s *seams) lstat(p string) (fs.FileInfo, error) {
	if s.look != nil {
		s.look(p)
	}
	return os.Lstat(p)
}

// answered runs the rechecked seam, if one is set.
func (s *seams) answered(p string) {
	if s.rechecked != nil {
		s.rechecked(p)
	}
}
