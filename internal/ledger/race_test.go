//go:build race

package ledger

// raceEnabled lets slow single-goroutine tests skip under the race
// detector, where they take minutes and can find nothing.
const raceEnabled = true
