//go:build !windows

package autostart

// Enabled returns ErrUnsupported off Windows.
func Enabled() (bool, error) { return false, ErrUnsupported }

// Enable returns ErrUnsupported off Windows.
func Enable(exePath string) error { return ErrUnsupported }

// Disable returns ErrUnsupported off Windows.
func Disable() error { return ErrUnsupported }
