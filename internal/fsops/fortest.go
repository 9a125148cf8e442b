package fsops

import (
	"io/fs"
	"os"
)

// seams are the points where the package's own tests step into resolving
// a path (set by package fsops's tests through setSeams) or into an
// engine (Engine.seams, set by the test that builds it); all are nil in
// the program.
type seams struct {
	// look runs just before realPathInfo looks (lstat) at a path the walk
	// found missing (tests make the file there, as a concurrent write
	// would).
	look func(p string)
	// rechecked runs when the walk cache answered p by one statx
	// (walkCache.recheck) instead of a walk.
	rechecked func(p string)

	// windows, an engine's, stands for what Windows says of items that
	// cannot exist here: a test's fake makes chosen paths OneDrive files
	// (a reparse point with a cloud tag, which needs Windows's cloud-files
	// filter driver; neither Linux nor Wine has one). The engine's view
	// (itemView) consults it instead of the OS for reparse points.
	windows windowsItems

	// disposed, an engine's, runs after each item of a source that a
	// move across volumes put in the bin (binSource), with how many so
	// far: the crash test kills its child there, halfway through.
	disposed func(n int)
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

// windowsItems is what Go on Windows says of items (seams.windows).
type windowsItems interface {
	// info is what a stat of p says on Windows, where the OS here says
	// info.
	info(p string, info fs.FileInfo) fs.FileInfo
	// entry is p's directory entry on Windows, where the OS here gives de.
	entry(p string, de fs.DirEntry) fs.DirEntry
	// reparse is p's reparse tag and file attributes, and whether p is
	// a reparse point (reparseTag).
	reparse(p string) (tag, attrs uint32, ok bool)
}
