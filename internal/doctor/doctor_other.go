//go:build !windows

package doctor

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dirWritable reports whether this user may create files in dir, without
// creating one: access(2) with W_OK|X_OK, which also answers EROFS on a
// read-only file system.
func dirWritable(dir string) error {
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("cannot create files in %s: %w", dir, err)
	}
	return nil
}

// secretsStoreExists: off Windows the secrets store is the directory
// <dataDir>/secrets, and secrets.Open creates it; doctor opens the store
// only when the directory is already there (no directory, no stored key).
func secretsStoreExists(dataDir string) bool {
	st, err := os.Stat(filepath.Join(dataDir, "secrets"))
	return err == nil && st.IsDir()
}
