package ui

// FreeSpaceHint says how a person frees space on a disk, in this system's
// words.
const FreeSpaceHint = "delete or move files you do not need, empty the Recycle Bin"
