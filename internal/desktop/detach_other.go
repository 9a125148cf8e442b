//go:build !windows

package desktop

import (
	"io/fs"
	"os/exec"
	"syscall"
)

// setDetached starts cmd in a session of its own, so that an app Hearth
// opened is not a child of Hearth's terminal or service.
func setDetached(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

func execBit(fi interface{ Mode() fs.FileMode }) bool {
	return fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
