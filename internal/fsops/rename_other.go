//go:build !linux && !windows

package fsops

import (
	"io/fs"
	"os"
)

// renameNoReplace renames from to to, failing with fs.ErrExist when
// something is at to (checked just before: no system call here refuses
// to replace).
func renameNoReplace(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrExist}
	}
	return os.Rename(from, to)
}
