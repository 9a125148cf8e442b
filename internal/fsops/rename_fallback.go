//go:build !windows

package fsops

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// renameClaimed renames from to to without ever replacing what is at to,
// on a file system whose rename cannot be told so (NFS, CIFS, FUSE answer
// renameat2's RENAME_NOREPLACE with EINVAL): a look before a plain rename
// would race another program writing there. A file gets a second name
// (link fails when to exists, atomically) and then loses its first; a
// folder first claims to as an empty folder of its own (mkdir fails when
// to exists), then takes its place: a rename replaces only an empty
// folder, so whatever another program put in it meanwhile stops it.
func renameClaimed(from, to string) error {
	info, err := os.Lstat(from)
	if err != nil {
		return err
	}
	exist := func() error { return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrExist} }
	if !info.IsDir() {
		if err := os.Link(from, to); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return exist()
			}
			return &os.LinkError{Op: "rename", Old: from, New: to,
				Err: fmt.Errorf("this drive cannot rename a file without risking replacing another one there (it refuses both a rename that never replaces and a second name for the file): %w", err)}
		}
		if err := os.Remove(from); err != nil {
			os.Remove(to) // the second name, added above: from stays whole
			return err
		}
		return nil
	}
	if err := os.Mkdir(to, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return exist()
		}
		return err
	}
	// syscall's rename: os.Rename refuses any folder at to, even this one.
	if err := syscall.Rename(from, to); err != nil {
		os.Remove(to) // only when still the empty folder claimed above
		if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTDIR) {
			return exist()
		}
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
