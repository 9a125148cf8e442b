//go:build !linux

package govern

import "io/fs"

// fileStamp is 0 where os.Stat gives no change time Hearth reads (Windows):
// a file is hashed again when its size or modification time changed.
func fileStamp(fs.FileInfo) int64 { return 0 }
