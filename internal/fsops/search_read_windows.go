package fsops

import (
	"io"
	"os"
)

// readSearchFile reads the regular file p whole into *buf, if it is at most
// limit bytes. A symlink or junction is refused, not followed; a OneDrive
// file is a file (itemView), but one not on this PC is not read, which
// would download it.
func readSearchFile(p string, buf *[]byte, limit int) ([]byte, readStatus) {
	if info, err := lstatItem(p); err != nil {
		return nil, readFailed
	} else if !info.Mode().IsRegular() {
		return nil, readNotRegular
	} else if (itemView{}).offline(p, info) {
		return nil, readOffline
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, readFailed
	}
	defer f.Close()
	info, err := itemView{}.opened(f)
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
