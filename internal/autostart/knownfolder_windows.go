package autostart

import "golang.org/x/sys/windows"

// knownFolder is the user's known folder named (UserProgramFiles,
// Programs, LocalAppData) where Windows says it is, or "" when it cannot say.
func knownFolder(name string) string {
	id := map[string]*windows.KNOWNFOLDERID{
		"UserProgramFiles": windows.FOLDERID_UserProgramFiles,
		"Programs":         windows.FOLDERID_Programs,
		"LocalAppData":     windows.FOLDERID_LocalAppData,
	}[name]
	if id == nil {
		return ""
	}
	p, err := windows.KnownFolderPath(id, windows.KF_FLAG_DONT_VERIFY)
	if err != nil {
		return ""
	}
	return p
}
