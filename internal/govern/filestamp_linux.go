package govern

import (
	"io/fs"
	"syscall"
)

// fileStamp is the file's change time (ctime), which no program can set
// back: a file rewritten and given its old modification time is hashed
// again.
func fileStamp(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
