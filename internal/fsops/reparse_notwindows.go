//go:build !windows

package fsops

// reparseTag: only Windows has reparse points; elsewhere an irregular
// item stays what os.Lstat says.
func reparseTag(string) (uint32, bool) { return 0, false }
