package risk

import (
	"strconv"
	"strings"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

// knownFolders are the known folders the tables name, and the person's
// own folders, by the name they are asked for (FOLDERID_ and the name of
// the Windows constant).
var knownFolders = map[string]*windows.KNOWNFOLDERID{
	"FOLDERID_RoamingAppData":     windows.FOLDERID_RoamingAppData,
	"FOLDERID_LocalAppData":       windows.FOLDERID_LocalAppData,
	"FOLDERID_LocalAppDataLow":    windows.FOLDERID_LocalAppDataLow,
	"FOLDERID_ProgramData":        windows.FOLDERID_ProgramData,
	"FOLDERID_Windows":            windows.FOLDERID_Windows,
	"FOLDERID_System":             windows.FOLDERID_System,
	"FOLDERID_SystemX86":          windows.FOLDERID_SystemX86,
	"FOLDERID_ProgramFiles":       windows.FOLDERID_ProgramFiles,
	"FOLDERID_ProgramFilesX86":    windows.FOLDERID_ProgramFilesX86,
	"FOLDERID_ProgramFilesCommon": windows.FOLDERID_ProgramFilesCommon,
	"FOLDERID_UserProgramFiles":   windows.FOLDERID_UserProgramFiles,
	"FOLDERID_Startup":            windows.FOLDERID_Startup,
	"FOLDERID_CommonStartup":      windows.FOLDERID_CommonStartup,
	"FOLDERID_StartMenu":          windows.FOLDERID_StartMenu,
	"FOLDERID_CommonStartMenu":    windows.FOLDERID_CommonStartMenu,
	"FOLDERID_Programs":           windows.FOLDERID_Programs,
	"FOLDERID_CommonPrograms":     windows.FOLDERID_CommonPrograms,
	"FOLDERID_SendTo":             windows.FOLDERID_SendTo,
	"FOLDERID_Templates":          windows.FOLDERID_Templates,
	"FOLDERID_CommonTemplates":    windows.FOLDERID_CommonTemplates,
	"FOLDERID_Documents":          windows.FOLDERID_Documents,
	"FOLDERID_Desktop":            windows.FOLDERID_Desktop,
	// The person's own folders, which the panel names by their names
	// wherever they are (web/ui Folders).
	"FOLDERID_Downloads": windows.FOLDERID_Downloads,
	"FOLDERID_Pictures":  windows.FOLDERID_Pictures,
	"FOLDERID_Music":     windows.FOLDERID_Music,
	"FOLDERID_Videos":    windows.FOLDERID_Videos,
}

// KnownFolderEnv returns env with the known folders added: a name
// FOLDERID_… is answered by SHGetKnownFolderPath, which follows User
// Shell Folders and OneDrive's moves, so a redirected Startup or
// Documents is named where it really is. Other names are env's.
func KnownFolderEnv(env func(string) string) func(string) string {
	return func(k string) string {
		if id, ok := knownFolders[k]; ok {
			p, err := windows.KnownFolderPath(id, windows.KF_FLAG_DONT_VERIFY)
			if err == nil {
				return p
			}
			return ""
		}
		if strings.HasPrefix(k, "FOLDERID_") {
			return ""
		}
		return env(k)
	}
}

// knownFoldersStamp changes when a known folder of the user may have
// moved: the last write time and value count of the keys Windows (and
// OneDrive's folder backup) record the user's folders in. Reading it is
// one key open and query each, far cheaper than asking every known
// folder again.
func knownFoldersStamp() string {
	var b strings.Builder
	for _, path := range []string{
		`Software\Microsoft\Windows\CurrentVersion\Explorer\User Shell Folders`,
		`Software\Microsoft\Windows\CurrentVersion\Explorer\Shell Folders`,
	} {
		k, err := registry.OpenKey(registry.CURRENT_USER, path, registry.QUERY_VALUE)
		if err != nil {
			b.WriteString("-;")
			continue
		}
		st, err := k.Stat()
		k.Close()
		if err != nil {
			b.WriteString("?;")
			continue
		}
		b.WriteString(strconv.FormatInt(st.ModTime().UnixNano(), 10) + "/" + strconv.Itoa(int(st.ValueCount)) + ";")
	}
	return b.String()
}
