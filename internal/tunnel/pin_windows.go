package tunnel

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

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

// Flags of GetFinalPathNameByHandle: the normalized name, with a drive
// letter.
const (
	fileNameNormalized = 0x0
	volumeNameDOS      = 0x0
)

// execPath is what exec runs for the open, verified f: the final path of
// its handle, not the pinned path. CreateProcess looks its path up again,
// and a pinned path that goes through a junction or a symbolic link
// could be re-pointed between the hash and the start; the final path has
// every reparse point resolved, and its folders cannot be renamed or
// removed while Hearth's handle (which does not share delete) keeps a
// file below them open, so it names the hashed file until the child has
// started.
func execPath(f *os.File, _ string) (string, error) {
	h := windows.Handle(f.Fd())
	buf := make([]uint16, windows.MAX_PATH)
	for {
		n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), fileNameNormalized|volumeNameDOS)
		if err != nil {
			return "", fmt.Errorf("final path of the open tunnel-client: %w", err)
		}
		if int(n) < len(buf) {
			return plainPath(windows.UTF16ToString(buf[:n])), nil
		}
		buf = make([]uint16, n+1)
	}
}

// plainPath drops the \\?\ prefix GetFinalPathNameByHandle puts before a
// drive path (\\?\C:\…) or a share (\\?\UNC\server\share\… becomes
// \\server\share\…), unless the path is too long to go without it.
func plainPath(p string) string {
	var plain string
	switch {
	case strings.HasPrefix(p, `\\?\UNC\`):
		plain = `\\` + p[len(`\\?\UNC\`):]
	case strings.HasPrefix(p, `\\?\`):
		plain = p[len(`\\?\`):]
	default:
		return p
	}
	if len(plain) >= windows.MAX_PATH {
		return p
	}
	return plain
}

// command is the exec.Cmd of a supervised run of c: its final path, with
// the pinned path as argv[0].
func (c *client) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.Path, args...)
	cmd.Args[0] = c.Name
	return cmd
}
