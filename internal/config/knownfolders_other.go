//go:build !windows

package config

// movedFolders: off Windows a person's folders live in the home folder.
func movedFolders() []string { return nil }

// localAppData: Local AppData is a Windows folder.
func localAppData() string { return "" }

// profileFolder: off Windows the home folder is $HOME.
func profileFolder() string { return "" }
