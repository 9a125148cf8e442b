package config

import (
	"strings"

	"golang.org/x/sys/windows"
)

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

// realPath is where the folder p really is (links and junctions followed,
// as the file system opens it), or p when it cannot be opened.
func realPath(p string) string {
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return p
	}
	h, err := windows.CreateFile(name, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return p
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), 0)
	if err != nil || n == 0 || int(n) >= len(buf) {
		return p
	}
	out := windows.UTF16ToString(buf[:n])
	if rest, ok := strings.CutPrefix(out, `\\?\UNC\`); ok {
		return `\\` + rest
	}
	return strings.TrimPrefix(out, `\\?\`)
}
