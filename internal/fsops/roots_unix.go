//go:build !windows && !linux

package fsops

import (
	"io/fs"
	"path/filepath"
)

// evalExisting returns the real path of an existing path (and no stat of
// it: the caller makes one).
func evalExisting(p string, _ bool) (string, fs.FileInfo, error) {
	real, err := filepath.EvalSymlinks(p)
	return real, nil, err
}
