package tunnel

import "os"

// seams are the points where the package's own tests step into a
// Supervisor (set directly by package tunnel's tests); all are nil in the
// program.
type seams struct {
	// beforeExec runs between the hash of the pinned file and the start
	// of the child (tests swap the file there).
	beforeExec func()
	// open replaces openExclusive for the pinned file in openClient
	// (tests make it fail as a sharing violation would).
	open func(path string) (*os.File, error)
	// initSave runs in Init after tunnel-client init succeeded and before
	// the tunnel ID is saved (tests pin there).
	initSave func()
}
