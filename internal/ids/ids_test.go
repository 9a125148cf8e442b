package ids

import (
	"strings"
	"testing"
)

// TestNew: prefix, an underscore and 20 base32 characters, Valid, and
// never twice the same.
func TestNew(t *testing.T) {
	seen := map[string]bool{}
	for _, prefix := range []string{"fut", "cmd", "", "a-much-longer-prefix-than-any-hearth-uses-for-its-ids"} {
		for range 1000 {
			id := New(prefix)
			if !strings.HasPrefix(id, prefix+"_") || len(id) != len(prefix)+21 || !Valid(prefix, id) {
				t.Fatalf("New(%q) = %q", prefix, id)
			}
			if seen[id] {
				t.Fatalf("New(%q) gave %q twice", prefix, id)
			}
			seen[id] = true
		}
	}
	if a := testing.AllocsPerRun(100, func() { New("fut") }); a != 1 && !raceEnabled {
		t.Errorf("New allocates %v times, want 1", a)
	}
}
