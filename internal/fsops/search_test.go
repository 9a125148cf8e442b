package fsops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hits renders the matches of res as "rel:kind:line:preview" lines.
func hits(t *testing.T, dir string, res SearchResult) []string {
	t.Helper()
	got := []string{}
	for _, m := range res.Matches {
		rel, err := filepath.Rel(dir, m.Path)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s:%s:%d:%s", filepath.ToSlash(rel), m.Kind, m.Line, m.Preview))
	}
	return got
}

func wantHits(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func mustSearch(t *testing.T, env testEnv, in SearchInput) SearchResult {
	t.Helper()
	res, err := env.e.Search(context.Background(), in)
	if err != nil {
		t.Fatalf("search %+v: %v", in, err)
	}
	return res
}

func fieldOf(err error) string {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Field
	}
	return ""
}

func TestSearchRegexAndCase(t *testing.T) {
	env := newTestEngine(t)
	dir := env.path("re")
	writeFiles(t, map[string]string{
		filepath.Join(dir, "h.go"): "func fooHandler() {}\nfunc   barHandler(x int)\nvar Handler = 1\nFUNC BigHandler\n",
		filepath.Join(dir, "n.md"): "Needle\nneedle\nNEEDLE\nnee dle\n",
	})
	res := mustSearch(t, env, SearchInput{Path: dir, Query: `func\s+\w+Handler`, Regex: true})
	wantHits(t, "regex", hits(t, dir, res), "h.go:content:1:func fooHandler() {}", "h.go:content:2:func   barHandler(x int)")
	res = mustSearch(t, env, SearchInput{Path: dir, Query: `func\s+\w+Handler`, Regex: true, CaseInsensitive: true})
	if len(res.Matches) != 3 {
		t.Errorf("case-insensitive regex: %q", hits(t, dir, res))
	}
	// A regex anchored per line, and "." or a negated class never spans lines.
	res = mustSearch(t, env, SearchInput{Path: dir, Query: `^needle$`, Regex: true})
	wantHits(t, "anchored", hits(t, dir, res), "n.md:content:2:needle")
	res = mustSearch(t, env, SearchInput{Path: dir, Query: `(?s)Needle.needle`, Regex: true})
	wantHits(t, "dot across lines", hits(t, dir, res))
	res = mustSearch(t, env, SearchInput{Path: dir, Query: `dle[^x]+nee`, Regex: true})
	wantHits(t, "class across lines", hits(t, dir, res))
	// Without regex the query is a literal: metacharacters are plain text.
	res = mustSearch(t, env, SearchInput{Path: dir, Query: `x int)`})
	wantHits(t, "literal", hits(t, dir, res), "h.go:content:2:func   barHandler(x int)")
	res = mustSearch(t, env, SearchInput{Path: dir, Query: "needle", CaseInsensitive: true})
	wantHits(t, "case-insensitive literal", hits(t, dir, res), "n.md:content:1:Needle", "n.md:content:2:needle", "n.md:content:3:NEEDLE")
	res = mustSearch(t, env, SearchInput{Path: dir, Query: "needle"})
	wantHits(t, "case-sensitive literal", hits(t, dir, res), "n.md:content:2:needle")
	// The name matches too, with the same matcher.
	res = mustSearch(t, env, SearchInput{Path: dir, Query: `^H\.`, Regex: true, CaseInsensitive: true})
	wantHits(t, "regex on names", hits(t, dir, res), "h.go:name:0:h.go")

	for _, bad := range []SearchInput{
		{Path: dir, Query: `func(`, Regex: true},
		{Path: dir, Query: `a\nb`, Regex: true},
		{Path: dir, Query: "a\nb"},
	} {
		if _, err := env.e.Search(context.Background(), bad); fieldOf(err) != "query" {
			t.Errorf("query %q: %v, want an error naming query", bad.Query, err)
		}
	}
}

func TestSearchIncludeExclude(t *testing.T) {
	env := newTestEngine(t)
	dir := env.path("globs")
	writeFiles(t, map[string]string{
		filepath.Join(dir, "a.go"):                    "needle",
		filepath.Join(dir, "a_test.go"):               "needle",
		filepath.Join(dir, "doc.md"):                  "needle",
		filepath.Join(dir, "src", "b.go"):             "needle",
		filepath.Join(dir, "src", "deep", "c.go"):     "needle",
		filepath.Join(dir, "src", "deep", "c.ts"):     "needle",
		filepath.Join(dir, "vendor", "v.go"):          "needle",
		filepath.Join(dir, "src", "testdata", "t.go"): "needle",
	})
	rels := func(res SearchResult) []string {
		var out []string
		for _, h := range hits(t, dir, res) {
			out = append(out, strings.SplitN(h, ":", 2)[0])
		}
		return out
	}
	res := mustSearch(t, env, SearchInput{Path: dir, Query: "needle", Include: []string{"**/*.go"}})
	wantHits(t, "include **/*.go", rels(res), "a.go", "a_test.go", "src/b.go", "src/deep/c.go", "src/testdata/t.go", "vendor/v.go")
	if res.Skipped["not_included"] != 2 {
		t.Errorf("skipped %v, want 2 not_included (doc.md, c.ts)", res.Skipped)
	}
	res = mustSearch(t, env, SearchInput{Path: dir, Query: "needle", Include: []string{"src/**/*.go", "*.md"}})
	wantHits(t, "include src/**/*.go and *.md", rels(res), "doc.md", "src/b.go", "src/deep/c.go", "src/testdata/t.go")
	res = mustSearch(t, env, SearchInput{Path: dir, Query: "needle", Include: []string{"*.go"}, Exclude: []string{"vendor", "**/testdata", "*_test.go"}})
	wantHits(t, "exclude", rels(res), "a.go", "src/b.go", "src/deep/c.go")
	if res.Skipped["excluded"] != 3 {
		t.Errorf("skipped %v, want 3 excluded (vendor, testdata, a_test.go)", res.Skipped)
	}
	for _, bad := range []SearchInput{
		{Path: dir, Query: "x", Include: []string{"*.go", "[a-"}},
		{Path: dir, Query: "x", Exclude: []string{""}},
		{Path: dir, Query: "x", Exclude: []string{"a//b"}},
	} {
		_, err := env.e.Search(context.Background(), bad)
		want := "include[1]"
		if bad.Exclude != nil {
			want = "exclude[0]"
		}
		if fieldOf(err) != want {
			t.Errorf("%+v: %v, want an error naming %s", bad, err, want)
		}
	}
}

// TestSearchIgnoreFiles: .gitignore (nested, negated), .ignore,
// .git/info/exclude and a .gitignore above the searched directory apply as
// git applies them; .git itself is never searched; respect_ignore false
// searches everything but hidden entries.
func TestSearchIgnoreFiles(t *testing.T) {
	env := newTestEngine(t)
	repo := env.path("repo")
	writeFiles(t, map[string]string{
		filepath.Join(repo, ".git", "HEAD"):                  "needle",
		filepath.Join(repo, ".git", "info", "exclude"):       "local.txt\n",
		filepath.Join(repo, ".gitignore"):                    "# build output\n*.log\n!keep.log\nnode_modules/\nbuild\n",
		filepath.Join(repo, ".ignore"):                       "gen/\n",
		filepath.Join(repo, "main.go"):                       "needle",
		filepath.Join(repo, "debug.log"):                     "needle",
		filepath.Join(repo, "keep.log"):                      "needle",
		filepath.Join(repo, "local.txt"):                     "needle",
		filepath.Join(repo, "node_modules", "m", "index.js"): "needle",
		filepath.Join(repo, "build", "out.txt"):              "needle",
		filepath.Join(repo, "gen", "g.go"):                   "needle",
		filepath.Join(repo, "pkg", ".gitignore"):             "secret.txt\n!debug2.log\n/anchored.txt\n",
		filepath.Join(repo, "pkg", "secret.txt"):             "needle",
		filepath.Join(repo, "pkg", "debug2.log"):             "needle",
		filepath.Join(repo, "pkg", "anchored.txt"):           "needle",
		filepath.Join(repo, "pkg", "sub", "anchored.txt"):    "needle",
		filepath.Join(repo, "pkg", "sub", "secret.txt"):      "needle",
		filepath.Join(repo, "pkg", "sub", "ok.txt"):          "needle",
		filepath.Join(repo, "secret.txt"):                    "needle",
	})
	rels := func(dir string, res SearchResult) []string {
		var out []string
		for _, h := range hits(t, dir, res) {
			out = append(out, strings.SplitN(h, ":", 2)[0])
		}
		return out
	}
	res := mustSearch(t, env, SearchInput{Path: repo, Query: "needle"})
	wantHits(t, "ignore files", rels(repo, res), "keep.log", "main.go", "pkg/debug2.log", "pkg/sub/anchored.txt", "pkg/sub/ok.txt", "secret.txt")
	// debug.log, local.txt, node_modules, build, gen, pkg/secret.txt,
	// pkg/anchored.txt, pkg/sub/secret.txt; .git and the ignore files are hidden.
	if res.Skipped["ignored"] != 8 || res.Skipped["hidden"] != 4 {
		t.Errorf("skipped %v, want 8 ignored and 4 hidden (.git, .gitignore, .ignore, pkg/.gitignore)", res.Skipped)
	}
	res = mustSearch(t, env, SearchInput{Path: repo, Query: "needle", Hidden: true})
	if got := rels(repo, res); slices.Contains(got, ".git/HEAD") || !slices.Contains(got, "main.go") {
		t.Errorf("hidden with ignore rules: %q (.git must stay out)", got)
	}
	// Searching a subdirectory still applies the work tree's ignore files above it.
	sub := filepath.Join(repo, "pkg")
	res = mustSearch(t, env, SearchInput{Path: sub, Query: "needle"})
	wantHits(t, "ignore files above the searched directory", rels(sub, res), "debug2.log", "sub/anchored.txt", "sub/ok.txt")
	off := false
	res = mustSearch(t, env, SearchInput{Path: repo, Query: "needle", RespectIgnore: &off})
	if len(res.Matches) != 14 || res.Skipped["ignored"] != 0 {
		t.Errorf("respect_ignore false: %d matches %q, skipped %v; want the 14 files that are not hidden", len(res.Matches), rels(repo, res), res.Skipped)
	}
	res = mustSearch(t, env, SearchInput{Path: repo, Query: "needle", RespectIgnore: &off, Hidden: true})
	if !slices.Contains(rels(repo, res), ".git/HEAD") {
		t.Errorf("respect_ignore false and hidden: .git not searched: %q", rels(repo, res))
	}
	// An ignore file that is a symlink is not followed (it could point out of the roots).
	outside := filepath.Join(env.root, "..", "outside-ignore")
	if err := os.WriteFile(outside, []byte("*.go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := env.path("linked")
	writeFiles(t, map[string]string{filepath.Join(linked, "x.go"): "needle"})
	if trySymlink(outside, filepath.Join(linked, ".ignore")) {
		res = mustSearch(t, env, SearchInput{Path: linked, Query: "needle"})
		wantHits(t, "symlinked ignore file", rels(linked, res), "x.go")
	}
}

func TestSearchHiddenContextNamesOnly(t *testing.T) {
	env := newTestEngine(t)
	dir := env.path("misc")
	writeFiles(t, map[string]string{
		filepath.Join(dir, ".env"):                "needle=1",
		filepath.Join(dir, ".config", "c.txt"):    "needle",
		filepath.Join(dir, "ctx.txt"):             "one\ntwo\nneedle\nfour\nfive\nsix\nseven\nneedle\n",
		filepath.Join(dir, "needle-dir", "n.txt"): "none",
		filepath.Join(dir, "a-needle.txt"):        "needle inside",
	})
	rels := func(res SearchResult) []string {
		var out []string
		for _, h := range hits(t, dir, res) {
			parts := strings.SplitN(h, ":", 4)
			out = append(out, parts[0]+":"+parts[2])
		}
		return out
	}
	res := mustSearch(t, env, SearchInput{Path: dir, Query: "needle"})
	wantHits(t, "hidden skipped", rels(res), "a-needle.txt:0", "a-needle.txt:1", "ctx.txt:3", "ctx.txt:8", "needle-dir:0")
	if res.Skipped["hidden"] != 2 {
		t.Errorf("skipped %v, want 2 hidden", res.Skipped)
	}
	res = mustSearch(t, env, SearchInput{Path: dir, Query: "needle", Hidden: true})
	wantHits(t, "hidden searched", rels(res), ".config/c.txt:1", ".env:1", "a-needle.txt:0", "a-needle.txt:1", "ctx.txt:3", "ctx.txt:8", "needle-dir:0")

	res = mustSearch(t, env, SearchInput{Path: dir, Query: "needle", Include: []string{"ctx.txt"}, ContextLines: 2})
	if len(res.Matches) != 2 {
		t.Fatalf("context search: %+v", res.Matches)
	}
	if m := res.Matches[0]; !slices.Equal(m.Before, []string{"one", "two"}) || !slices.Equal(m.After, []string{"four", "five"}) {
		t.Errorf("context of line 3: before %q after %q", m.Before, m.After)
	}
	if m := res.Matches[1]; !slices.Equal(m.Before, []string{"six", "seven"}) || len(m.After) != 0 {
		t.Errorf("context of the last line: before %q after %q", m.Before, m.After)
	}
	res = mustSearch(t, env, SearchInput{Path: dir, Query: "two", Include: []string{"ctx.txt"}, ContextLines: 5})
	if m := res.Matches[0]; !slices.Equal(m.Before, []string{"one"}) || len(m.After) != 5 {
		t.Errorf("context near the start: before %q after %q", m.Before, m.After)
	}
	for _, n := range []int{-1, MaxSearchContext + 1} {
		if _, err := env.e.Search(context.Background(), SearchInput{Path: dir, Query: "x", ContextLines: n}); fieldOf(err) != "context_lines" {
			t.Errorf("context_lines %d: %v", n, err)
		}
	}

	res = mustSearch(t, env, SearchInput{Path: dir, Query: "needle", NamesOnly: true})
	wantHits(t, "names only", rels(res), "a-needle.txt:0", "needle-dir:0")
	if res.FilesSearched != 0 {
		t.Errorf("names_only read %d files", res.FilesSearched)
	}
}

// TestSearchBounds: the limit keeps the first matches in path order, the
// same ones every time whatever the parallel walk's timing; a file with
// more matches than the limit stops being read; max_entries and the size
// and binary skips still hold.
func TestSearchBounds(t *testing.T) {
	env := newTestEngine(t)
	dir := env.path("many")
	files := map[string]string{}
	var want []string
	for i := range 40 {
		for j := range 5 {
			name := fmt.Sprintf("d%02d/f%d.txt", i, j)
			files[filepath.Join(dir, filepath.FromSlash(name))] = "x\nneedle\n"
			want = append(want, name+":content:2:needle")
		}
	}
	files[filepath.Join(dir, "zz", "many.txt")] = strings.Repeat("needle\n", 1000)
	files[filepath.Join(dir, "zz", "big.txt")] = strings.Repeat("needle ", MaxSearchFileSize/7+1)
	files[filepath.Join(dir, "zz", "bin.dat")] = "needle\x00"
	writeFiles(t, files)
	for range 3 {
		res := mustSearch(t, env, SearchInput{Path: dir, Query: "needle", Limit: 7})
		wantHits(t, "limit 7", hits(t, dir, res), want[:7]...)
		if !res.Truncated || res.TruncatedBy != "limit" {
			t.Errorf("limit: truncated %v by %q", res.Truncated, res.TruncatedBy)
		}
	}
	res := mustSearch(t, env, SearchInput{Path: filepath.Join(dir, "zz"), Query: "needle", Limit: 10})
	if len(res.Matches) != 10 || !res.Truncated || res.Skipped["large"] != 1 || res.Skipped["binary"] != 1 || res.SkippedLarge != 1 || res.SkippedBinary != 1 {
		t.Errorf("one file past the limit: %d matches, %+v", len(res.Matches), res)
	}
	res = mustSearch(t, env, SearchInput{Path: dir, Query: "needle", MaxEntries: 20})
	if res.EntriesScanned != 20 || !res.Truncated || res.TruncatedBy != "max_entries" {
		t.Errorf("max_entries 20: scanned %d, truncated %v by %q", res.EntriesScanned, res.Truncated, res.TruncatedBy)
	}
	res = mustSearch(t, env, SearchInput{Path: dir, Query: "needle", Limit: MaxSearchLimit + 1000, MaxEntries: MaxSearchEntries})
	if len(res.Matches) != MaxSearchLimit {
		t.Errorf("a limit over the maximum gave %d matches, want %d", len(res.Matches), MaxSearchLimit)
	}
	// A single file can be searched too.
	one := filepath.Join(dir, "d00", "f0.txt")
	res = mustSearch(t, env, SearchInput{Path: one, Query: "needle"})
	wantHits(t, "a file", hits(t, dir, res), "d00/f0.txt:content:2:needle")
}

// TestSearchContainment: a symlink out of the root (to a directory or a
// file) is never followed, even with hidden and without ignore rules; the
// data directory and a denied directory are pruned, never read.
func TestSearchContainment(t *testing.T) {
	env := newTestEngine(t)
	outside := filepath.Join(filepath.Dir(env.root), "outside")
	writeFiles(t, map[string]string{
		filepath.Join(outside, "secret.txt"):          "needle",
		filepath.Join(env.root, "in", "ok.txt"):       "needle",
		filepath.Join(env.root, "in", "pin", "p.txt"): "needle",
		filepath.Join(env.data, "data.txt"):           "needle",
	})
	dirLink := trySymlink(outside, filepath.Join(env.root, "in", "out-dir"))
	fileLink := trySymlink(filepath.Join(outside, "secret.txt"), filepath.Join(env.root, "in", "out-file.txt"))
	if err := env.e.Roots.Deny(filepath.Join(env.root, "in", "pin")); err != nil {
		t.Fatal(err)
	}
	off := false
	res := mustSearch(t, env, SearchInput{Path: env.root, Query: "needle", Hidden: true, RespectIgnore: &off, Limit: MaxSearchLimit})
	for _, m := range res.Matches {
		if m.Kind == "content" && !strings.HasSuffix(m.Path, "ok.txt") {
			t.Errorf("search read %s", m.Path)
		}
	}
	if res.Skipped["denied"] != 2 {
		t.Errorf("skipped %v, want 2 denied (the data directory and the pin)", res.Skipped)
	}
	if links := res.Skipped["symlink"]; (dirLink || fileLink) && links == 0 {
		t.Errorf("skipped %v, want the symlinks counted", res.Skipped)
	}
	if _, err := env.e.Search(context.Background(), SearchInput{Path: outside, Query: "needle"}); !errors.Is(err, ErrContainment) {
		t.Errorf("search outside the roots: %v", err)
	}
	if _, err := env.e.Search(context.Background(), SearchInput{Path: env.data, Query: "needle"}); ruleOf(err) != RuleDenied {
		t.Errorf("search of the data directory: %v", err)
	}
}
