package recipes_test

import (
	"slices"
	"testing"

	"github.com/hearth-dev/hearth/internal/recipes"
)

// TestStepPrimitivesCannotBeWidened: the allow-list is handed out as a
// copy, so no caller can add a primitive to it.
func TestStepPrimitivesCannotBeWidened(t *testing.T) {
	l := recipes.StepPrimitives()
	l[0] = "machine.process_kill"
	if got := recipes.StepPrimitives(); slices.Contains(got, "machine.process_kill") || got[0] != "machine.exec" {
		t.Fatalf("the step allow-list was changed by a caller: %v", got)
	}
}
