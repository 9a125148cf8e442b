//go:build !windows

package fsops

import "io/fs"

// reparseTag: only Windows has reparse points; elsewhere an irregular
// item stays what os.Lstat says.
func reparseTag(string) (uint32, bool) { return 0, false }

// fileAttributes: only Windows has file attributes.
func fileAttributes(fs.FileInfo) (uint32, bool) { return 0, false }
