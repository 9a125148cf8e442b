package fsops

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// renameNoReplace renames from to to with MoveFileEx without
// MOVEFILE_REPLACE_EXISTING, so it fails when something is at to (and a
// rename that changes only a name's case works); long paths get the \\?\
// prefix, and a read-only file moves as any other.
func renameNoReplace(from, to string) error {
	f, err := windows.UTF16PtrFromString(atomicfile.ExtendedLength(from))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	t, err := windows.UTF16PtrFromString(atomicfile.ExtendedLength(to))
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	err = windows.MoveFileEx(f, t, windows.MOVEFILE_WRITE_THROUGH)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, windows.ERROR_ALREADY_EXISTS), errors.Is(err, windows.ERROR_FILE_EXISTS):
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrExist}
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}
