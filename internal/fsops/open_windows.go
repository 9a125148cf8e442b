package fsops

import "os"

// openRead opens path for reading. Windows has no FIFO a path under a
// root can name (named pipes live under \\.\pipe\), so a plain open cannot
// block on one.
func openRead(path string) (*os.File, error) { return os.Open(path) }
