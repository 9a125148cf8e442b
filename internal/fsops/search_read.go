package fsops

// readStatus says what readSearchFile found.
type readStatus int

const (
	readOK         readStatus = iota
	readLarge                 // over the size cap
	readNotRegular            // a symlink, directory, device or pipe by the time it was opened
	readFailed                // missing or unreadable
	readOffline               // a OneDrive file not on this PC (Windows)
)

// grow returns *buf resized to n bytes, reallocating only when it is too
// small, so a search worker reads every file into one buffer.
func grow(buf *[]byte, n int) []byte {
	if cap(*buf) < n {
		*buf = make([]byte, n, max(n, 2*cap(*buf)))
	}
	return (*buf)[:n]
}
