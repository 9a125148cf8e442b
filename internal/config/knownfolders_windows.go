package config

import "golang.org/x/sys/windows"

// movedFolders are the user's Documents, Desktop, Downloads and Pictures
// where Windows says they are (SHGetKnownFolderPath, which follows a move
// into OneDrive or onto another drive), never %USERPROFILE% joined with
// their names.
func movedFolders() []string {
	var out []string
	for _, id := range []*windows.KNOWNFOLDERID{windows.FOLDERID_Documents, windows.FOLDERID_Desktop, windows.FOLDERID_Downloads, windows.FOLDERID_Pictures} {
		if p, err := windows.KnownFolderPath(id, windows.KF_FLAG_DONT_VERIFY); err == nil && p != "" {
			out = append(out, p)
		}
	}
	return out
}

// localAppData is the known folder Local AppData, or "" when Windows
// cannot say.
func localAppData() string {
	p, _ := windows.KnownFolderPath(windows.FOLDERID_LocalAppData, windows.KF_FLAG_DONT_VERIFY)
	return p
}

// profileFolder is the user's profile folder, for when %USERPROFILE% is
// unset, or "" when Windows cannot say.
func profileFolder() string {
	p, _ := windows.KnownFolderPath(windows.FOLDERID_Profile, windows.KF_FLAG_DONT_VERIFY)
	return p
}
