//go:build !windows

package winconsole

// AttachParent does nothing off Windows, where every program started from a
// terminal already has it as stdin, stdout and stderr. It reports false.
func AttachParent() (attached bool) { return false }
