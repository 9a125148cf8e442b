package fsops

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func writeFiles(t testing.TB, files map[string]string) {
	t.Helper()
	for p, s := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestList(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	dir := env.path("proj")
	writeFiles(t, map[string]string{
		filepath.Join(dir, "b.txt"):        "bb",
		filepath.Join(dir, "a.txt"):        "a",
		filepath.Join(dir, "sub", "c.txt"): "c",
	})
	links := trySymlink(filepath.Join(dir, "a.txt"), filepath.Join(dir, "link"))
	res, err := env.e.List(ctx, ListInput{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Entries {
		got = append(got, fmt.Sprintf("%s:%s:%d", e.Name, e.Type, e.Size))
	}
	want, total := "a.txt:file:1 b.txt:file:2 sub:dir:", 3
	if links {
		want, total = "a.txt:file:1 b.txt:file:2 link:symlink:", 4 // a symlink's own size varies
	}
	if s := strings.Join(got, " "); !strings.HasPrefix(s, want) || !strings.Contains(s, "sub:dir:") || res.Truncated || res.Total != total {
		t.Fatalf("entries %v truncated=%v total=%d", got, res.Truncated, res.Total)
	}
	res, err = env.e.List(ctx, ListInput{Path: dir, Limit: 2})
	if err != nil || len(res.Entries) != 2 || !res.Truncated || res.Total != total {
		t.Fatalf("limited list %+v, %v", res, err)
	}
	if _, err := env.e.List(ctx, ListInput{Path: filepath.Join(dir, "a.txt")}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("list of a file: %v", err)
	}
	if _, err := env.e.List(ctx, ListInput{Path: dir, Limit: -1}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("negative limit: %v", err)
	}
	if _, err := env.e.List(ctx, ListInput{Path: env.data}); !errors.Is(err, ErrContainment) {
		t.Fatalf("list of the data directory: %v", err)
	}
}

func TestRead(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("r.txt")
	content := "héllo wörld\n" // é and ö are two bytes each
	writeFiles(t, map[string]string{p: content})
	whole := hashBytes([]byte(content))

	res, err := env.e.Read(ctx, ReadInput{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	if res.Data != content || !res.EOF || res.Size != int64(len(content)) || res.SHA256 != whole || res.Encoding != "utf8" {
		t.Fatalf("read %+v", res)
	}
	// A limit that cuts é leaves it for the next read.
	res, err = env.e.Read(ctx, ReadInput{Path: p, Limit: 2})
	if err != nil || res.Data != "h" || res.Length != 1 || res.EOF || res.SHA256 != whole {
		t.Fatalf("cut read %+v, %v", res, err)
	}
	res, err = env.e.Read(ctx, ReadInput{Path: p, Offset: 1, Limit: 5})
	if err != nil || res.Data != "éllo" || res.Length != 5 {
		t.Fatalf("second read %+v, %v", res, err)
	}
	res, err = env.e.Read(ctx, ReadInput{Path: p, Offset: 100})
	if err != nil || res.Data != "" || !res.EOF {
		t.Fatalf("read past the end %+v, %v", res, err)
	}
	// Starting inside a character is not UTF-8; base64 always works.
	if _, err := env.e.Read(ctx, ReadInput{Path: p, Offset: 2, Limit: 3}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("read inside a character: %v", err)
	}
	res, err = env.e.Read(ctx, ReadInput{Path: p, Offset: 2, Limit: 3, Encoding: "base64"})
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := base64.StdEncoding.DecodeString(res.Data); !bytes.Equal(raw, []byte(content)[2:5]) {
		t.Fatalf("base64 read %q", raw)
	}
	for _, in := range []ReadInput{{Path: p, Offset: -1}, {Path: p, Encoding: "utf16"}, {Path: env.root}} {
		if _, err := env.e.Read(ctx, in); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Read(%+v) = %v, want an input error", in, err)
		}
	}
	// The limit is clamped.
	big := env.path("big.txt")
	writeFiles(t, map[string]string{big: strings.Repeat("x", MaxReadLimit+10)})
	res, err = env.e.Read(ctx, ReadInput{Path: big, Limit: 10 * MaxReadLimit})
	if err != nil || res.Length != MaxReadLimit || res.EOF {
		t.Fatalf("clamped read: length %d eof %v, %v", res.Length, res.EOF, err)
	}
}

func TestReadHashFollowsChanges(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("paged.txt")
	writeFiles(t, map[string]string{p: "page one page two"})
	first, err := env.e.Read(ctx, ReadInput{Path: p, Limit: 8})
	if err != nil {
		t.Fatal(err)
	}
	second, err := env.e.Read(ctx, ReadInput{Path: p, Offset: 8, Limit: 8})
	if err != nil || second.SHA256 != first.SHA256 || first.SHA256 != hashBytes([]byte("page one page two")) {
		t.Fatalf("paged hashes %q %q (%v)", first.SHA256, second.SHA256, err)
	}
	w, err := env.e.Write(ctx, "r", WriteInput{Path: p, Data: "rewritten"})
	if err != nil {
		t.Fatal(err)
	}
	third, err := env.e.Read(ctx, ReadInput{Path: p, Limit: 8})
	if err != nil || third.SHA256 != *w.SHA256 {
		t.Fatalf("hash after a write %q, want %q (%v)", third.SHA256, *w.SHA256, err)
	}
	st, err := env.e.Stat(ctx, StatInput{Path: p})
	if err != nil || st.SHA256 != *w.SHA256 {
		t.Fatalf("stat hash after a write %q, want %q (%v)", st.SHA256, *w.SHA256, err)
	}
}

func TestStat(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("s.txt")
	writeFiles(t, map[string]string{p: "abc"})
	res, err := env.e.Stat(ctx, StatInput{Path: p})
	if err != nil || !res.Exists || res.Type != TypeFile || res.Size != 3 || res.SHA256 != hashBytes([]byte("abc")) || res.MTime.IsZero() {
		t.Fatalf("stat %+v, %v", res, err)
	}
	res, err = env.e.Stat(ctx, StatInput{Path: env.root})
	if err != nil || res.Type != TypeDir || res.SHA256 != "" {
		t.Fatalf("stat of a dir %+v, %v", res, err)
	}
	res, err = env.e.Stat(ctx, StatInput{Path: env.path("missing")})
	if err != nil || res.Exists {
		t.Fatalf("stat of a missing file %+v, %v", res, err)
	}
	if trySymlink(p, env.path("alias")) {
		res, err = env.e.Stat(ctx, StatInput{Path: env.path("alias")})
		if err != nil || res.Path != p || res.Type != TypeFile {
			t.Fatalf("stat through a symlink %+v, %v", res, err)
		}
	}
}

// TestQuickStat: the quick attempt answers what Stat answers (a file, a
// directory, a missing path, a link, a refused path) after bounded work,
// and declines, having hashed nothing, a file above quickHashSize whose
// hash is not remembered; once Stat hashed it, it answers that too.
func TestQuickStat(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	small, large := env.path("s.txt"), env.path("large.bin")
	writeFiles(t, map[string]string{small: "abc", large: strings.Repeat("x", quickHashSize+1)})
	paths := []string{small, env.root, env.path("missing"), env.data, filepath.Join(env.root, "..", "x"), "relative"}
	if trySymlink(small, env.path("alias")) {
		paths = append(paths, env.path("alias"))
	}
	if trySymlink(filepath.Dir(env.root), env.path("out")) {
		paths = append(paths, env.path("out", "home", "s.txt"))
	}
	for _, p := range paths {
		want, werr := env.e.Stat(ctx, StatInput{Path: p})
		got, done, gerr := env.e.QuickStat(ctx, StatInput{Path: p})
		if !done || fmt.Sprint(got, gerr) != fmt.Sprint(want, werr) {
			t.Errorf("%s: quick stat %+v %v (done %v), want %+v %v", p, got, gerr, done, want, werr)
		}
	}
	if got, done, err := env.e.QuickStat(ctx, StatInput{Path: large}); done || err != nil || got != (StatResult{}) {
		t.Fatalf("a large file not hashed yet must be declined: %+v %v %v", got, done, err)
	}
	want, err := env.e.Stat(ctx, StatInput{Path: large})
	if err != nil {
		t.Fatal(err)
	}
	if got, done, err := env.e.QuickStat(ctx, StatInput{Path: large}); !done || err != nil || got != want {
		t.Fatalf("a large file whose hash is remembered: %+v %v %v, want %+v", got, done, err, want)
	}
}

func TestSearch(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	dir := env.path("proj")
	writeFiles(t, map[string]string{
		filepath.Join(dir, "main.go"):                 "package main\n\nfunc needle() {}\r\n// needle again\n",
		filepath.Join(dir, "docs", "needle-notes.md"): "nothing here\n",
		filepath.Join(dir, "docs", "other.md"):        "a needle\n",
		filepath.Join(dir, "large.txt"):               strings.Repeat("needle ", MaxSearchFileSize/7+1),
		filepath.Join(dir, "bin.dat"):                 "needle\x00binary",
		filepath.Join(dir, ".hearth-tmp-9"):           "needle",
		filepath.Join(env.root, "outside-proj.txt"):   "needle",
	})
	// Where links can be made, the walk must not follow them.
	trySymlink(filepath.Join(env.root, "outside-proj.txt"), filepath.Join(dir, "link.txt"))
	trySymlink(env.root, filepath.Join(dir, "looplink"))

	res, err := env.e.Search(ctx, SearchInput{Path: dir, Query: "needle"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range res.Matches {
		rel, _ := filepath.Rel(dir, m.Path)
		got = append(got, fmt.Sprintf("%s:%s:%d:%s", filepath.ToSlash(rel), m.Kind, m.Line, m.Preview))
	}
	want := []string{
		"docs/needle-notes.md:name:0:needle-notes.md",
		"docs/other.md:content:1:a needle",
		"main.go:content:3:func needle() {}",
		"main.go:content:4:// needle again",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("matches:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Truncated || res.SkippedLarge != 1 || res.SkippedBinary != 1 {
		t.Fatalf("result %+v", res)
	}

	res, err = env.e.Search(ctx, SearchInput{Path: dir, Query: "needle", Limit: 2})
	if err != nil || len(res.Matches) != 2 || !res.Truncated || res.TruncatedBy != "limit" {
		t.Fatalf("limited search %+v, %v", res, err)
	}
	res, err = env.e.Search(ctx, SearchInput{Path: dir, Query: "needle", MaxEntries: 3})
	if err != nil || res.EntriesScanned != 3 || !res.Truncated || res.TruncatedBy != "max_entries" {
		t.Fatalf("entry-bounded search %+v, %v", res, err)
	}
	// The data directory under the root is pruned from a search of the root.
	writeFiles(t, map[string]string{filepath.Join(env.data, "secret.txt"): "needle"})
	res, err = env.e.Search(ctx, SearchInput{Path: env.root, Query: "needle", Limit: MaxSearchLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Matches {
		if strings.HasPrefix(m.Path, env.data) {
			t.Fatalf("search entered the data directory: %+v", m)
		}
	}
	if _, err := env.e.Search(ctx, SearchInput{Path: dir}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("empty query: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := env.e.Search(cctx, SearchInput{Path: dir, Query: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled search: %v", err)
	}
}

func TestPreview(t *testing.T) {
	long := strings.Repeat("é", 300) + "needle" + strings.Repeat("ö", 300)
	p := preview([]byte(long), strings.Index(long, "needle"))
	if len(p) > searchPreviewBytes || !strings.Contains(p, "needle") || strings.ContainsRune(p, '\uFFFD') {
		t.Fatalf("preview %q (%d bytes)", p, len(p))
	}
}

// TestStatResultAppendJSONMatchesMarshal: what fs.stat answers with is
// written as encoding/json writes it, for every field set and unset and
// strings that need escaping; a field added to StatResult without a line
// in AppendJSON fails here.
func TestStatResultAppendJSONMatchesMarshal(t *testing.T) {
	if n := reflect.TypeFor[StatResult]().NumField(); n != 7 {
		t.Fatalf("StatResult has %d fields; AppendJSON writes 7: add the new one there and here", n)
	}
	strs := []string{"", "/home/me/notes.txt", `C:\Users\me\<a&b>.txt`, "bad\xffutf8\u2028", "\"quoted\"\n"}
	times := []time.Time{{}, time.Unix(1764600000, 123456789).UTC(), time.Unix(1764600000, 0).In(time.FixedZone("x", 3600)),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	n := 0
	for i, path := range strs {
		for _, exists := range []bool{false, true} {
			for j, tm := range times {
				for _, size := range []int64{0, -1, 4096, 1 << 40} {
					r := StatResult{Path: path, Exists: exists, Type: strs[(i+1)%len(strs)], Size: size,
						Mode: strs[(i+2)%len(strs)], MTime: tm, SHA256: strs[(i+j)%len(strs)]}
					want, err := json.Marshal(r)
					got, ok := r.AppendJSON([]byte("prefix"))
					if ok != (err == nil) || ok && string(got) != "prefix"+string(want) {
						t.Fatalf("AppendJSON(%#v) = %s %v, Marshal %s %v", r, got, ok, want, err)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d results", n)
}
