//go:build !windows

package atomicfile

import (
	"os"
	"syscall"
)

// TransientErrnos are the errors a rename or remove returns while another
// process holds the file, which Replacer retries.
func TransientErrnos() []syscall.Errno {
	return []syscall.Errno{syscall.EPERM, syscall.EACCES, syscall.EBUSY}
}

// syncDir makes a rename or remove in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return serr
	}
	return cerr
}

// replaceFile renames oldpath over newpath; syncDir then makes it durable.
func replaceFile(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
