package fsops_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// BenchmarkSearch30K builds a 30,000-file checkout once (source, a
// node_modules, a .git, build output, a .gitignore) and times the same
// searches through Hearth's engine in-process (impl=hearth), through a real
// Hearth over MCP with the go-sdk client (impl=hearth_mcp) and with ripgrep
// (impl=rg, skipped when rg is missing). Compare with
//
//	benchstat -col /impl bench.txt
func BenchmarkSearch30K(b *testing.B) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	writeSourceTree(b, dir, 30000)
	e := newSearchEngine(b, dir)
	in := hearthtest.Start(b, func(c *config.Config) { c.Roots = []string{dir} })
	client := hearthtest.Connect(b, in.URL, "bench-search")
	rg, _ := exec.LookPath("rg")
	queries := []struct {
		name string
		in   fsops.SearchInput
		rg   []string
	}{
		// A literal that never matches: every file is read and scanned.
		{"literal", fsops.SearchInput{Query: "zqxj_never_matches"}, []string{"-F"}},
		// A regex with a required literal (the prefilter's case).
		{"regex", fsops.SearchInput{Query: `[a-z]+Handler\(ctx, never\)`, Regex: true}, nil},
		// A regex with no literal in it: the regex engine runs over every byte.
		{"regex_noliteral", fsops.SearchInput{Query: `\d{7}[a-z]`, Regex: true}, nil},
	}
	for _, q := range queries {
		q.in.Path, q.in.MaxEntries = dir, fsops.MaxSearchEntries
		b.Run("query="+q.name+"/impl=hearth", func(b *testing.B) {
			for b.Loop() {
				res, err := e.Search(context.Background(), q.in)
				if err != nil || res.Truncated || res.FilesSearched < 15000 {
					b.Fatalf("search: %v; %d files searched, truncated %v", err, res.FilesSearched, res.Truncated)
				}
			}
		})
		b.Run("query="+q.name+"/impl=hearth_mcp", func(b *testing.B) {
			args := map[string]any{"operation": "search", "path": dir, "query": q.in.Query, "regex": q.in.Regex, "max_entries": q.in.MaxEntries}
			for b.Loop() {
				r := client.Call("fs", args)
				if r.State() != "completed" || r.Get("result.truncated") != false {
					b.Fatalf("search over MCP: %s", r.Raw)
				}
			}
		})
		b.Run("query="+q.name+"/impl=rg", func(b *testing.B) {
			if rg == "" {
				b.Skip("ripgrep (rg) is not installed: no comparison")
			}
			for b.Loop() {
				out, err := rgCommand(rg, dir, q.in.Query, q.rg...).Output()
				var exit *exec.ExitError
				if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) || len(out) > 0 {
					b.Fatalf("rg: %v: %s", err, out)
				}
			}
		})
	}
}
