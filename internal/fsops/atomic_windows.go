package fsops

import (
	"syscall"
)

// Windows error codes a rename or delete returns while another process has
// the file open (syscall names only the first).
const (
	errorSharingViolation syscall.Errno = 32
	errorLockViolation    syscall.Errno = 33
)

func transientErrnos() []syscall.Errno {
	return []syscall.Errno{syscall.ERROR_ACCESS_DENIED, errorSharingViolation, errorLockViolation}
}

// syncDir does nothing on Windows: directories cannot be opened for
// FlushFileBuffers, and NTFS journals the rename itself.
func syncDir(string) error { return nil }
