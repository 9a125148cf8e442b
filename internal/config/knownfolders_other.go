//go:build !windows

package config

// movedFolders: off Windows a person's folders live in the home folder.
func movedFolders() []string { return nil }
