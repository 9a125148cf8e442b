//go:build !windows && !linux

package fsops

import "path/filepath"

// evalExisting returns the real path of an existing path.
func evalExisting(p string) (string, error) { return filepath.EvalSymlinks(p) }
