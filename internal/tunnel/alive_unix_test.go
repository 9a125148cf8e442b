//go:build !windows

package tunnel

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// alive reports whether pid is a live process. A zombie (exited, not yet
// reaped by a parent that may never reap it in a container) counts as
// dead.
func alive(pid int) bool {
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			return stat[i+2] != 'Z' && stat[i+2] != 'X'
		}
		return true
	} else if errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat("/proc/self/stat"); err == nil {
			return false
		}
	}
	return syscall.Kill(pid, 0) == nil
}
