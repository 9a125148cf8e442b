//go:build !windows

package screen

// InputDesktop answers nil: X11 has no secure desktop that takes input
// away from the person's session (a screen locker grabs the keyboard,
// which the X server refuses to other clients by itself).
func InputDesktop() error { return nil }
