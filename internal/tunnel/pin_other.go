//go:build !windows

package tunnel

import (
	"os"
	"runtime"
	"strconv"
)

// openExclusive opens path for reading and hashing. Unix has no mandatory
// share modes; execPath closes the gap instead where it can.
func openExclusive(path string) (*os.File, error) { return os.Open(path) }

// execPath is what exec runs for the open, verified f: on Linux the open
// file itself (/proc/self/fd/N, which the child inherits across fork and
// execve resolves before close-on-exec closes it), so that a file renamed
// over path after the hash cannot be what runs; elsewhere path.
func execPath(f *os.File, path string) string {
	if runtime.GOOS == "linux" {
		if _, err := os.Stat("/proc/self/fd"); err == nil {
			return "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
		}
	}
	return path
}
