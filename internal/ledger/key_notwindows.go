//go:build !windows

package ledger

import (
	"fmt"
	"io/fs"
)

// checkPrivate refuses a key file that its group or others may access.
func checkPrivate(path string, fi fs.FileInfo) error {
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("key file %s is accessible by group or others (mode %04o); run chmod 600 on it", path, perm)
	}
	return nil
}
