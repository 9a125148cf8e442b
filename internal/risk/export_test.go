package risk

import "time"

// SetClock sets the clock of p's location refresh (tests).
func (p *Places) SetClock(now func() time.Time) { p.now = now }

// RefreshEvery is refreshEvery, for tests.
const RefreshEvery = refreshEvery

// Forget drops id's kept answers, so the next Names compares again
// (benchmarks of the first look at a file).
func (id *Identities) Forget() {
	id.mu.Lock()
	defer id.mu.Unlock()
	clear(id.answers)
}

// VersionNames is versionNames with every table name wanted, for tests.
func VersionNames(path string) []string { return versionNames(path, tableNames()) }

// SetClock sets the clock of id's refresh of the program folders (tests).
func (id *Identities) SetClock(now func() time.Time) { id.now = now }

// IdentityRefresh is identityRefresh, for tests.
const IdentityRefresh = identityRefresh

// StampEvery is stampEvery, for tests.
const StampEvery = stampEvery

// CountLooks makes w count the paths its checks look at (lstat) in n.
func (w *Writes) CountLooks(n *int) {
	look := w.exists
	w.exists = func(p string) bool { *n++; return look(p) }
}
