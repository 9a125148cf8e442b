//go:build !windows

package fsops

import (
	"errors"
	"syscall"
)

// readSearchFile reads the regular file p whole into *buf, if it is at most
// limit bytes. It never follows a symlink (one swapped in after the walk saw
// a file is refused by the kernel) and never blocks on a pipe.
func readSearchFile(p string, buf *[]byte, limit int) ([]byte, readStatus) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, readNotRegular
		}
		return nil, readFailed
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, readFailed
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, readNotRegular
	}
	if st.Size > int64(limit) {
		return nil, readLarge
	}
	data := grow(buf, int(st.Size))
	n := 0
	for n < len(data) {
		m, err := syscall.Read(fd, data[n:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, readFailed
		}
		if m == 0 {
			break // the file shrank since fstat
		}
		n += m
	}
	return data[:n], readOK
}
