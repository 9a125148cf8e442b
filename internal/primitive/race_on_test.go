//go:build race

package primitive

// raceEnabled: the race detector's build allocates where the plain one
// does not, so allocation counts are checked without it.
const raceEnabled = true
