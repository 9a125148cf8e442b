//go:build !windows

package tray

import "errors"

// OpenURL is Windows-only: elsewhere Hearth runs headless (serve) and
// prints the control panel's login URL instead.
func OpenURL(raw string) error {
	if err := checkBrowsable(raw); err != nil {
		return err
	}
	return errors.New("opening a browser is implemented on Windows only; use the login URL serve prints")
}
