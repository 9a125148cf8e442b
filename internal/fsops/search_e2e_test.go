package fsops_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestSearchOptionsOverMCP: the new search fields travel through the
// advertised schema and the strict validation, and bad values are refused
// naming the field.
func TestSearchOptionsOverMCP(t *testing.T) {
	in := hearthtest.Start(t, nil)
	dir := filepath.Join(in.Root, "proj")
	for name, body := range map[string]string{
		".gitignore":       "gen/\n",
		"main.go":          "package main\n\nfunc fooHandler() {}\n// end\n",
		"gen/generated.go": "func barHandler() {}\n",
		"notes.md":         "FooHandler in prose\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mc := hearthtest.Connect(t, in.URL, "search")
	r := mc.Call("fs", map[string]any{"operation": "search", "path": dir, "query": `[a-z]+Handler\(`, "regex": true,
		"case_insensitive": true, "include": []string{"*.go"}, "context_lines": 1})
	if r.State() != "completed" || r.Get("result.matches.0.line") != float64(3) || r.Get("result.matches.0.before.0") != "" ||
		r.Get("result.matches.0.after.0") != "// end" || r.Get("result.matches.1") != nil || r.Get("result.skipped.ignored") != float64(1) {
		t.Fatalf("search with options: %s", r.Raw)
	}
	r = mc.Call("fs", map[string]any{"operation": "search", "path": dir, "query": "Handler", "respect_ignore": false, "names_only": true})
	if r.State() != "completed" || r.Get("result.files_searched") != float64(0) {
		t.Fatalf("names_only: %s", r.Raw)
	}
	for field, bad := range map[string]any{"context_lines": 6, "include": "*.go", "regex": "yes", "exclude": []any{1}} {
		r := mc.Call("fs", map[string]any{"operation": "search", "path": dir, "query": "x", field: bad})
		if r.State() != "failed" || !strings.Contains(r.Text, field) {
			t.Errorf("%s = %v: %s", field, bad, r.Raw)
		}
	}
	r = mc.Call("fs", map[string]any{"operation": "search", "path": dir, "query": "(", "regex": true})
	if r.State() != "failed" || r.Get("error.code") != "invalid_input" || !strings.Contains(r.Text, "query") {
		t.Errorf("bad regex: %s", r.Raw)
	}
}
