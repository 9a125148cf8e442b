//go:build !windows

package tunnel

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
)

// childFD is the descriptor number the open tunnel-client has in a
// supervised child on Linux: the first of exec.Cmd.ExtraFiles.
const childFD = 3

// openExclusive opens path for reading and hashing. Unix has no mandatory
// share modes; execPath and command close the gap instead where they can.
func openExclusive(path string) (*os.File, error) { return os.Open(path) }

// procFD reports whether a file can be run through /proc/self/fd here.
func procFD() bool {
	if runtime.GOOS != "linux" {
		return false
	}
	_, err := os.Stat("/proc/self/fd")
	return err == nil
}

// execPath is what a setup command runs for the open, verified f (they
// run through proc.Run, which cannot hand the child a descriptor). On
// Linux it is the open file itself, /proc/self/fd/N: the child inherits N
// across fork and execve resolves the path before close-on-exec closes
// N, so a file renamed over path after the hash cannot be what runs.
// A #! script is the exception: its interpreter opens the path it is
// given after execve, when N is closed already (ENOENT), so a script is
// run by its pinned path, which leaves the swap window open for setup
// commands (Linux is a development platform; a supervised run has no such
// window, see command). Elsewhere it is path.
func execPath(f *os.File, path string) (string, error) {
	if !procFD() || isScript(f) {
		return path, nil
	}
	return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())), nil
}

// isScript reports whether f starts with #!.
func isScript(f *os.File) bool {
	var b [2]byte
	n, _ := f.ReadAt(b[:], 0)
	return n == 2 && b[0] == '#' && b[1] == '!'
}

// command is the exec.Cmd of a supervised run of c, with the pinned path
// as argv[0]. On Linux the open file goes to the child as descriptor 3
// (ExtraFiles, without close-on-exec) and the child execs
// /proc/self/fd/3: what runs is the hashed file itself, a #! script
// included (its interpreter can still open /proc/self/fd/3). tunnel-client
// keeps that read-only descriptor of its own file for its lifetime.
func (c *client) command(ctx context.Context, args ...string) *exec.Cmd {
	if !procFD() {
		return exec.CommandContext(ctx, c.Name, args...)
	}
	cmd := exec.CommandContext(ctx, "/proc/self/fd/"+strconv.Itoa(childFD), args...)
	cmd.ExtraFiles = []*os.File{c.f}
	cmd.Args[0] = c.Name
	return cmd
}
