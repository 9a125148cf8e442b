//go:build !linux

package fsops

import "io/fs"

// freshStat: off Linux no stat is known to be the file as it is now (a
// network share's may be cached): a remembered hash is looked up by what
// the open's fstat says.
func freshStat(fs.FileInfo) bool { return false }

// changeTime: the hash cache keys by size and modification time alone.
func changeTime(fs.FileInfo) int64 { return 0 }
