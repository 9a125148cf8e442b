package fortest

import "testing"

// TestMustPassesInTests: in a test binary Must returns (outside one it
// panics; a program cannot be both, so that side is read, not run).
func TestMustPassesInTests(t *testing.T) {
	Must()
}
