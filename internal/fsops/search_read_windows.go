package fsops

import (
	"io"
	"os"
)

// readSearchFile reads the regular file p whole into *buf, if it is at most
// limit bytes. A symlink or junction is refused, not followed.
func readSearchFile(p string, buf *[]byte, limit int) ([]byte, readStatus) {
	if info, err := os.Lstat(p); err != nil {
		return nil, readFailed
	} else if !info.Mode().IsRegular() {
		return nil, readNotRegular
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, readFailed
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, readFailed
	}
	if !info.Mode().IsRegular() {
		return nil, readNotRegular
	}
	if info.Size() > int64(limit) {
		return nil, readLarge
	}
	data := grow(buf, int(info.Size()))
	n, err := io.ReadFull(f, data)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, readFailed
	}
	return data[:n], readOK
}
