//go:build !race

package ids

const raceEnabled = false
