//go:build !linux && !windows

package fsops

// renameNoReplace renames from to to, failing with fs.ErrExist when
// something is at to: no portable system call here refuses to replace,
// so renameClaimed claims the name first.
func renameNoReplace(from, to string) error { return renameClaimed(from, to) }
