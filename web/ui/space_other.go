//go:build !windows

package ui

// FreeSpaceHint says how a person frees space on a disk, in this system's
// words (the desktop's trash: there is no Recycle Bin here).
const FreeSpaceHint = "delete or move files you do not need, empty the trash"
