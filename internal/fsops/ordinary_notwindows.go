//go:build !windows

package fsops

import "io/fs"

// markedOnTheWay returns nil: the Hidden and System attributes are
// Windows'; elsewhere a hidden name begins with a dot.
func markedOnTheWay(string) []string { return nil }

// executable reports whether info has an execute bit.
func executable(info fs.FileInfo) bool {
	return info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}
