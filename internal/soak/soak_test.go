package soak

import (
	"strings"
	"testing"
)

// TestWholeTellsTornVersions: the torn-file check accepts every whole
// version and refuses any cut or mixed one.
func TestWholeTellsTornVersions(t *testing.T) {
	a, b := content(1, 2), content(1, 3)
	if !whole(a) || !whole(b) {
		t.Fatal("a whole version is taken for torn")
	}
	for name, torn := range map[string]string{
		"cut":   a[:len(a)/2],
		"mixed": a[:len(a)/2] + b[len(b)/2:],
		"empty": "",
		"tail":  strings.TrimSuffix(a, "\n") + "0\n",
	} {
		if whole(torn) {
			t.Errorf("%s version taken for whole", name)
		}
	}
}

// TestCorpusIsHostile: every corpus entry has a name and a body or header
// that Hearth must refuse; the names are distinct.
func TestCorpusIsHostile(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range corpus("/tmp/root") {
		if b.name == "" || seen[b.name] {
			t.Fatalf("corpus entry %q: empty or repeated name", b.name)
		}
		seen[b.name] = true
	}
	if len(seen) < 50 {
		t.Fatalf("corpus has %d entries", len(seen))
	}
}
