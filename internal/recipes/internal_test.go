package recipes

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	params := map[string]string{"a": "A ${b}", "b": "B"}
	get := func(n string) (string, error) { return params[n], nil }
	for _, c := range []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"${a}", "A ${b}", ""}, // not recursive
		{"x-${a}-${b}-y", "x-A ${b}-B-y", ""},
		{"$${a}", "${a}", ""},
		{"$$${a}", "$${a}", ""}, // "$" then the escape
		{"$ {a} $a", "$ {a} $a", ""},
		{"${", "", "unterminated"},
		{"${a", "", "unterminated"},
		{"${}", "", "parameter name"},
		{"${a b}", "", "parameter name"},
		{"${9}", "", "parameter name"},
	} {
		got, err := expand(c.in, get)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("expand(%q): error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("expand(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestFindPatterns(t *testing.T) {
	h := strings.Fields("a b c a b c x a b c y y y y y y")
	pats := findPatterns(h, 3, 2)
	if len(pats) != 1 || strings.Join(pats[0].Primitives, ",") != "a,b,c" || pats[0].Count != 3 {
		t.Fatalf("patterns: %+v", pats)
	}
	// Overlapping occurrences count once: "a a a a" holds "a a" twice.
	if pats := findPatterns(strings.Fields("a b a b a b"), 3, 2); len(pats) != 1 || strings.Join(pats[0].Primitives, ",") != "a,b" {
		t.Fatalf("non-overlapping: %+v", pats)
	}
	if pats := findPatterns(strings.Fields("a b a b"), 3, 2); len(pats) != 0 {
		t.Fatalf("below threshold: %+v", pats)
	}
	if pats := findPatterns(nil, 3, 2); pats == nil || len(pats) != 0 {
		t.Fatalf("empty history: %+v", pats)
	}
}
