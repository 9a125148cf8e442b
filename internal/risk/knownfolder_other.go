//go:build !windows

package risk

import "strings"

// KnownFolderEnv returns env: known folders (FOLDERID_…) are Windows'
// alone, and answered "" here.
func KnownFolderEnv(env func(string) string) func(string) string {
	return func(k string) string {
		if strings.HasPrefix(k, "FOLDERID_") {
			return ""
		}
		return env(k)
	}
}

// knownFoldersStamp is "": no known folder moves here.
func knownFoldersStamp() string { return "" }
