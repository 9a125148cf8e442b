//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd || windows)

package main

import "os"

// isTerminal reports false where Hearth has no reliable terminal check, so
// `safety reset` is refused there rather than trusted on a guess.
func isTerminal(*os.File) bool { return false }
