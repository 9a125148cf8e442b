//go:build !windows

package setup

import "errors"

// openFolder is available on Windows only (File Explorer); elsewhere the
// page names the folder instead.
func openFolder(string) error {
	return errors.New("opening a folder is available on Windows only")
}
