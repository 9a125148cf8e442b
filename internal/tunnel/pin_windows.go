package tunnel

import (
	"os"

	"golang.org/x/sys/windows"
)

// openExclusive opens path for reading and hashing, sharing it only with
// readers: while the handle is open nobody can write to the file, rename
// it or delete it (and so cannot rename another file over it), but
// CreateProcess, which opens it for reading and executing, still can.
func openExclusive(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ, nil,
		windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// execPath is what exec runs for the open, verified f: its path, which
// the open handle keeps naming the same content.
func execPath(_ *os.File, path string) string { return path }
