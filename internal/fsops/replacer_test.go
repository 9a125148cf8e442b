package fsops

import (
	"os"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// flakyRename fails with errno for the first fails calls, then renames; it
// stands in for atomicfile.Replacer.Rename to make a replace retry or fail.
func flakyRename(fails int, errno error) func(string, string) error {
	calls := 0
	return func(oldpath, newpath string) error {
		calls++
		if calls <= fails {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: errno}
		}
		return os.Rename(oldpath, newpath)
	}
}

// tempNames lists the atomic writer's temporary files left in dir.
func tempNames(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, de := range des {
		if strings.HasPrefix(de.Name(), atomicfile.TempPrefix) {
			out = append(out, de.Name())
		}
	}
	return out
}
