package fsops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames from to to, failing with fs.ErrExist when
// something is at to (renameat2 RENAME_NOREPLACE): a move never replaces
// a file another program put there after Hearth looked. A file system
// without the flag gets renameClaimed, which never replaces either.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrExist}
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS):
		return renameClaimed(from, to)
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: fmt.Errorf("%w", err)}
}
