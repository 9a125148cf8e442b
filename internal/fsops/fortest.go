package fsops

import "io/fs"

// seams are the points where a test steps into the engine; all are zero
// in the program.
type seams struct {
	// windows, when set, stands for what Windows says of items that
	// cannot exist here: a test's fake makes chosen paths OneDrive files
	// (a reparse point with a cloud tag, which needs Windows's cloud-files
	// filter driver; neither Linux nor Wine has one). The engine's view
	// (itemView) consults it instead of the OS for reparse points.
	windows windowsItems
}

// windowsItems is what Go on Windows says of items (seams.windows).
type windowsItems interface {
	// info is what a stat of p says on Windows, where the OS here says
	// info.
	info(p string, info fs.FileInfo) fs.FileInfo
	// entry is p's directory entry on Windows, where the OS here gives de.
	entry(p string, de fs.DirEntry) fs.DirEntry
	// reparse is p's reparse tag and file attributes, and whether p is
	// a reparse point (reparseTag).
	reparse(p string) (tag, attrs uint32, ok bool)
}
