//go:build !windows

package selftest

import (
	"testing"

	"github.com/hearth-dev/hearth/internal/selftestreport"
)

// leftovers lists what a run could leave outside its sandbox here:
// nothing (no tasks, credentials or windows off Windows).
func leftovers(*testing.T) []string { return nil }

// checkNoFixtures: off Windows the run makes no task, credential outside
// its data directory, window or shortcut.
func checkNoFixtures(*testing.T, *selftestreport.Report) {}
