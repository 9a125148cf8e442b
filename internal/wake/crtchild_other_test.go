//go:build !windows

package wake

// crtPipeChild is the Windows pipe test's child; elsewhere descriptors 3
// and 4 are plain inherited files (spawn_other.go) and need no child.
func crtPipeChild() int { return 1 }
