//go:build !windows

package config

import "path/filepath"

// movedFolders: off Windows a person's folders live in the home folder.
func movedFolders() []string { return nil }

// localAppData: Local AppData is a Windows folder.
func localAppData() string { return "" }

// profileFolder: off Windows the home folder is $HOME.
func profileFolder() string { return "" }

// realPath is where p really is (links followed), or p when it cannot be
// resolved.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
