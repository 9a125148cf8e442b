package primitive

import (
	"strings"
	"testing"
)

// TestNewID: prefix, an underscore and 20 base32 characters, ValidID, and
// never twice the same.
func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for _, prefix := range []string{"fut", "cmd", "", "a-much-longer-prefix-than-any-hearth-uses-for-its-ids"} {
		for range 1000 {
			id := NewID(prefix)
			if !strings.HasPrefix(id, prefix+"_") || len(id) != len(prefix)+21 || !ValidID(prefix, id) {
				t.Fatalf("NewID(%q) = %q", prefix, id)
			}
			if seen[id] {
				t.Fatalf("NewID(%q) gave %q twice", prefix, id)
			}
			seen[id] = true
		}
	}
	if a := testing.AllocsPerRun(100, func() { NewID("fut") }); a != 1 && !raceEnabled {
		t.Errorf("NewID allocates %v times, want 1", a)
	}
}
