package runs_test

import (
	"slices"
	"testing"

	"github.com/hearth-dev/hearth/internal/runs"
)

// TestScatterKindsCannotBeWidened: the allow-list is handed out as a copy,
// so no caller can add a primitive (a kill) to it.
func TestScatterKindsCannotBeWidened(t *testing.T) {
	l := runs.ScatterKinds()
	l[0] = "machine.process_kill"
	_ = append(l, "machine.estop")
	if got := runs.ScatterKinds(); slices.Contains(got, "machine.process_kill") || slices.Contains(got, "machine.estop") {
		t.Fatalf("the scatter allow-list was widened by a caller: %v", got)
	}
}
