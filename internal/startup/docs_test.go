package startup_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/startup"
)

// update rewrites docs/SECURITY.md's startup-index block from the code:
// go test ./internal/startup/ -run TestDocsShowTheStartupIndex -update
var update = flag.Bool("update", false, "rewrite the startup-index block of docs/SECURITY.md")

// TestDocsShowTheStartupIndex: docs/SECURITY.md's table of what the
// startup index reads is the code's (startup.Markdown), word for word.
func TestDocsShowTheStartupIndex(t *testing.T) {
	file := filepath.Join("..", "..", "docs", "SECURITY.md")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "<!-- startup-index")
	end := strings.Index(s, "<!-- /startup-index -->")
	if start < 0 || end < start {
		t.Fatal("docs/SECURITY.md has no startup-index block")
	}
	from := start + strings.Index(s[start:], "\n") + 1
	want := startup.Markdown()
	if s[from:end] == want {
		return
	}
	if *update {
		if err := os.WriteFile(file, []byte(s[:from]+want+s[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/SECURITY.md's startup index differs from internal/startup; run go test ./internal/startup/ -run TestDocsShowTheStartupIndex -update, or put this between the markers:\n%s", want)
}
