package fsops

import (
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// markedOnTheWay returns the existing folders and file on the way to the
// real path p that carry the Hidden or System attribute (a volume's root
// is left out: Windows marks it so).
func markedOnTheWay(p string) []string {
	var out []string
	for dir := filepath.Clean(p); ; {
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		if name, err := windows.UTF16PtrFromString(atomicfile.ExtendedLength(dir)); err == nil {
			if attrs, err := windows.GetFileAttributes(name); err == nil &&
				attrs&(windows.FILE_ATTRIBUTE_HIDDEN|windows.FILE_ATTRIBUTE_SYSTEM) != 0 {
				out = append(out, dir)
			}
		}
		dir = parent
	}
	return out
}

// executable reports false: Windows has no execute bit (a program is
// known by its content and its extension).
func executable(fs.FileInfo) bool { return false }
