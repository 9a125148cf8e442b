package fsops_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/store"
)

// writeSourceTree fills dir with about n files shaped like a project
// checkout: source under src/ (some directories with their own .gitignore,
// with a negation), a node_modules and build output the top .gitignore
// excludes, a .git directory, hidden files, binary files, logs (one kept by
// a negated pattern) and symlinks. Lines mix ordinary code with the words
// the searches look for: "needle", "Needle", "NEEDLE" and fooHandler(ctx.
func writeSourceTree(tb testing.TB, dir string, n int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(13, 13))
	write := func(rel string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	words := []string{"return", "err", "nil", "ctx", "value", "index", "buffer", "config", "request", "handle", "if", "for", "range", "struct", "string", "int"}
	text := func(lines int) []byte {
		var b bytes.Buffer
		for l := range lines {
			switch r := rng.IntN(1000); {
			case r == 0:
				fmt.Fprintf(&b, "\t// needle %d here\n", l)
			case r == 1:
				fmt.Fprintf(&b, "\tNeedle := %d\n", rng.IntN(1000))
			case r == 2:
				fmt.Fprintf(&b, "func %sHandler(ctx context.Context) error {\n", words[rng.IntN(len(words))])
			case r == 3:
				b.WriteString("\tNEEDLE_LIMIT = 42\n")
			default:
				b.WriteByte('\t')
				for range 3 + rng.IntN(8) {
					b.WriteString(words[rng.IntN(len(words))])
					b.WriteByte(' ')
				}
				b.WriteString("\n")
			}
		}
		return b.Bytes()
	}
	write(".gitignore", []byte("node_modules/\nbuild/\n*.log\n!important.log\n/dist\n"))
	write(".ignore", []byte("*.min.js\n"))
	write(".git/HEAD", []byte("ref: refs/heads/main\nneedle\n"))
	write(".git/info/exclude", []byte("local-notes.txt\n"))
	write("important.log", text(20))
	write("debug.log", text(20))
	write("local-notes.txt", text(10))
	write("dist/bundle.js", text(30))
	exts := []string{".go", ".ts", ".py", ".md", ".go", ".go"}
	for i := 0; i < n; i++ {
		switch r := i % 20; {
		case r < 6: // node_modules: 30%
			write(fmt.Sprintf("node_modules/pkg%03d/lib/f%d.js", i%97, i), text(20+rng.IntN(40)))
		case r == 6:
			write(fmt.Sprintf(".git/objects/%02x/%d", i%256, i), text(10))
		case r == 7:
			write(fmt.Sprintf("build/out%02d/f%d.o.txt", i%13, i), text(15))
		case r == 8 && i%40 == 8:
			write(fmt.Sprintf("src/mod%02d/blob%d.bin", i%50, i), append([]byte("needle\x00\x01\x02"), text(5)...))
		case r == 9 && i%40 == 9:
			write(fmt.Sprintf(".config/tool/f%d.txt", i), text(10))
		case r == 10 && i%40 == 10:
			write(fmt.Sprintf("src/mod%02d/app%d.min.js", i%50, i), text(10))
		default:
			mod := fmt.Sprintf("src/mod%02d", i%50)
			if i%50 < 5 && i < 50 {
				write(mod+"/.gitignore", []byte("generated_*.go\n!generated_keep.go\n"))
				write(mod+"/generated_keep.go", text(10))
			}
			name := fmt.Sprintf("%s/pkg%d/file%d%s", mod, i%7, i, exts[i%len(exts)])
			if i%17 == 0 {
				name = fmt.Sprintf("%s/generated_%d.go", mod, i)
			}
			write(name, text(20+rng.IntN(60)))
		}
	}
	for i := range 5 {
		target := filepath.Join(dir, "src", fmt.Sprintf("mod%02d", i), "generated_keep.go")
		if err := os.Symlink(target, filepath.Join(dir, "src", fmt.Sprintf("link%d.go", i))); err != nil {
			tb.Logf("no symlinks here: %v", err)
			break
		}
	}
}

// newSearchEngine is an fs engine whose only root is root.
func newSearchEngine(tb testing.TB, root string) *fsops.Engine {
	tb.Helper()
	data := tb.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(data, "hearth.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	roots, err := fsops.NewRoots([]string{root}, []string{data})
	if err != nil {
		tb.Fatal(err)
	}
	return &fsops.Engine{DB: db, Roots: roots, SpillDir: filepath.Join(data, "fs-undo")}
}

// ripgrep returns the path of rg, or skips.
func ripgrep(tb testing.TB) string {
	tb.Helper()
	rg, err := exec.LookPath("rg")
	if err != nil {
		tb.Skip("ripgrep (rg) is not installed (scripts/install-deps installs Debian's ripgrep): no comparison")
	}
	return rg
}

// rgCommand is rg run the way Hearth's search behaves by default: no
// config file, no global gitignore, no symlinks followed, files of any size,
// paths printed relative to dir ("./src/...").
func rgCommand(rg, dir, query string, args ...string) *exec.Cmd {
	all := append([]string{"--no-config", "--no-ignore-global", "--no-messages", "--color", "never",
		"--line-number", "--with-filename", "--no-heading", "--null"}, args...)
	all = append(all, "-e", query, ".")
	cmd := exec.Command(rg, all...)
	cmd.Dir = dir // rg matches globs against paths relative to its working directory
	cmd.Env = append(os.Environ(), "RIPGREP_CONFIG_PATH=")
	return cmd
}

// TestSearchMatchesRipgrep runs the same searches through Hearth and rg on
// a generated tree and requires the same matching lines.
func TestSearchMatchesRipgrep(t *testing.T) {
	rg := ripgrep(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeSourceTree(t, dir, 2000)
	e := newSearchEngine(t, dir)
	off := false
	cases := []struct {
		name string
		in   fsops.SearchInput
		rg   []string
	}{
		{"literal", fsops.SearchInput{Query: "needle"}, []string{"-F"}},
		{"literal case-insensitive", fsops.SearchInput{Query: "needle", CaseInsensitive: true}, []string{"-F", "-i"}},
		{"regex", fsops.SearchInput{Query: `[a-z]+Handler\(ctx`, Regex: true}, nil},
		{"regex without a literal", fsops.SearchInput{Query: `^\s+Needle := \d{3}$`, Regex: true}, nil},
		{"regex with a byte-class prefilter", fsops.SearchInput{Query: `:= \d{3}$`, Regex: true}, nil},
		{"regex with no prefilter", fsops.SearchInput{Query: `\b(err|nil)\W+(ctx|int)\W+(for|if)\W+(range|struct)\b`, Regex: true}, nil},
		{"regex case-insensitive", fsops.SearchInput{Query: `need(le)? \d+`, Regex: true, CaseInsensitive: true}, []string{"-i"}},
		{"include", fsops.SearchInput{Query: "needle", Include: []string{"*.go", "src/mod0*/**/*.md"}}, []string{"-F", "-g", "*.go", "-g", "src/mod0*/**/*.md"}},
		{"exclude", fsops.SearchInput{Query: "Needle", Exclude: []string{"src/mod1*", "*.py"}}, []string{"-F", "-g", "!src/mod1*", "-g", "!*.py"}},
		{"hidden", fsops.SearchInput{Query: "needle", Hidden: true}, []string{"-F", "--hidden", "-g", "!.git"}},
		{"no ignore files", fsops.SearchInput{Query: "NEEDLE", RespectIgnore: &off}, []string{"-F", "--no-ignore"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			in.Path, in.Limit, in.MaxEntries = dir, fsops.MaxSearchLimit, fsops.MaxSearchEntries
			res, err := e.Search(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range res.Matches {
				if m.Kind == "content" {
					got = append(got, m.Path+":"+strconv.Itoa(m.Line))
				}
			}
			if res.Truncated {
				t.Fatalf("hearth's answer is truncated (%s) with %d matches: make the tree's matches fewer", res.TruncatedBy, len(res.Matches))
			}
			out, err := rgCommand(rg, dir, in.Query, c.rg...).Output()
			if err != nil && len(out) > 0 {
				t.Fatalf("rg: %v", err)
			}
			var want []string
			for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
				path, rest, ok := strings.Cut(line, "\x00")
				if !ok {
					continue
				}
				num, _, _ := strings.Cut(rest, ":")
				want = append(want, filepath.Join(dir, path)+":"+num)
			}
			slices.Sort(got)
			slices.Sort(want)
			if len(want) == 0 {
				t.Fatalf("rg found nothing: the case tests nothing")
			}
			t.Logf("%d matching lines", len(want))
			if !slices.Equal(got, want) {
				onlyHearth, onlyRg := diff(got, want), diff(want, got)
				t.Errorf("%d matches from hearth, %d from rg\nonly hearth: %q\nonly rg: %q", len(got), len(want), head(onlyHearth), head(onlyRg))
			}
		})
	}
}

func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found {
			out = append(out, x)
		}
	}
	return out
}

func head(s []string) []string { return s[:min(len(s), 10)] }
