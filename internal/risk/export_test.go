package risk

import "time"

// SetClock sets the clock of p's location refresh (tests).
func (p *Places) SetClock(now func() time.Time) { p.now = now }

// RefreshEvery is refreshEvery, for tests.
const RefreshEvery = refreshEvery
