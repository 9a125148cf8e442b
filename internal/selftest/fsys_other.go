//go:build !windows

package selftest

import (
	"io"
	"path/filepath"
)

// heldOpenBlocksRename: a POSIX rename replaces a file others hold open.
const heldOpenBlocksRename = false

// makeJunction: junctions are NTFS mount points.
func makeJunction(string, string) error {
	return skip("junctions are NTFS mount points; this is not Windows")
}

// symlinkNotAllowed: any user may make a symbolic link here.
func symlinkNotAllowed(error) bool { return false }

// runHoldChild has nothing to hold here: the check that uses it is
// skipped off Windows.
func runHoldChild(string, io.Reader, io.Writer) error {
	return skip("holding a file open blocks nothing here; this is not Windows")
}

// realDir is dir with symbolic links resolved (macOS puts the temporary
// directory behind one).
func realDir(dir string) (string, error) { return filepath.EvalSymlinks(dir) }

// finalPathProbe: POSIX systems name a path of any length.
func finalPathProbe(string) error { return nil }
