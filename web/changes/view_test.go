package changes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/web/ui"
)

// newEngine is a real fs engine over a temporary root and database.
func newEngine(t testing.TB) (*fsops.Engine, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, data := filepath.Join(base, "root"), filepath.Join(base, "data")
	for _, d := range []string{root, data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	db, err := store.Open(context.Background(), filepath.Join(data, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	roots, err := fsops.NewRoots([]string{root}, []string{data})
	if err != nil {
		t.Fatal(err)
	}
	e := &fsops.Engine{DB: db, Roots: roots, SpillDir: filepath.Join(data, "undo")}
	if _, err := e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e, root
}

func render(t testing.TB, v ChatView) string {
	t.Helper()
	var b strings.Builder
	if err := ChatPage(ui.Chrome{Title: "Changes", CSRF: "x", Operator: "Ann"}, v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPrunedChangesAreSaid: when retention removes a chat's earlier
// change, the page says that file's earlier changes are no longer
// undoable (and for how long they are kept) instead of silently offering
// an Undo all that cannot reach them.
func TestPrunedChangesAreSaid(t *testing.T) {
	e, root := newEngine(t)
	ctx := context.Background()
	clock := time.Now().Add(-48 * time.Hour)
	e.Now = func() time.Time { return clock }
	p := filepath.Join(root, "story.txt")
	if err := os.WriteFile(p, []byte("once\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Write(ctx, "r:chat", fsops.WriteInput{Path: p, Data: "twice\n"}); err != nil {
		t.Fatal(err)
	}
	clock = time.Now()
	if _, err := e.Write(ctx, "r:chat", fsops.WriteInput{Path: p, Data: "thrice\n"}); err != nil {
		t.Fatal(err)
	}
	h := &Handler{FS: e, KeptDays: 1}
	v, err := h.ChatView(ctx, "r:chat", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if page := render(t, v); strings.Contains(page, "expired-note") {
		t.Fatal("an expired note before anything was pruned")
	}
	if _, err := e.PruneReceipts(ctx, time.Now().Add(-24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	v, err = h.ChatView(ctx, "r:chat", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, v)
	if len(v.Changes) != 1 || !strings.Contains(page, "expired-note") || !strings.Contains(page, "no longer undoable (kept 1 days)") ||
		!strings.Contains(page, "story.txt") {
		t.Fatalf("the page does not say the earlier change is gone:\n%s", page)
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n")
	b := []byte("a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n")
	var got []string
	for _, l := range Unified(a, b, 1) {
		got = append(got, l.String())
	}
	want := "@@ -1,3 +1,3 @@| a|-b|+B| c|@@ -10,1 +10,2 @@| j|+k"
	if s := strings.Join(got, "|"); s != want {
		t.Fatalf("diff\n%s\nwant\n%s", s, want)
	}
	if Unified(a, a, 3) != nil {
		t.Fatal("equal contents have a diff")
	}
	if Text([]byte{'a', 0}) || !Text([]byte("é\n")) {
		t.Fatal("Text")
	}
}

// TestDiffShowsNoHunkHeaders: a diff on the page never shows a unified
// diff's hunk header ("@@ -0,0 +1,2 @@" above a new file); the parts of a
// change with lines between them are separated by a "…" line.
func TestDiffShowsNoHunkHeaders(t *testing.T) {
	var b strings.Builder
	if err := diff(Unified(nil, []byte("a\nb\n"), 3)).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "@@") || !strings.Contains(b.String(), "+a") {
		t.Fatalf("a new file's diff: %s", b.String())
	}
	b.Reset()
	x, y := []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"), []byte("a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n")
	if err := diff(Unified(x, y, 1)).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "@@") || strings.Count(b.String(), "…") != 1 {
		t.Fatalf("a change in two parts: %s", b.String())
	}
}

// BenchmarkChatPage1000 is the Changes page of one chat that made 1,000
// changes (200 files of 40 lines, each written then patched four times):
// reading them, their diffs and approvals, and rendering the page. Issue
// 34 asks for at most 300 ms on the 2-core machine; docs/BENCHMARKS.md has
// the figure.
func BenchmarkChatPage1000(b *testing.B) {
	e, root := newEngine(b)
	ctx := context.Background()
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf("line %d of a text file that a chat edits", i))
	}
	body := strings.Join(lines, "\n") + "\n"
	for f := range 200 {
		p := filepath.Join(root, fmt.Sprintf("file%03d.txt", f))
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		for k := range 5 {
			var err error
			if k == 0 {
				_, err = e.Write(ctx, "r:big", fsops.WriteInput{Path: p, Data: strings.Replace(body, "line 1 ", "LINE 1 ", 1)})
			} else {
				_, err = e.Patch(ctx, "r:big", fsops.PatchInput{Path: p, Replacements: []fsops.Replacement{
					{Old: fmt.Sprintf("line %d of", k*7), New: fmt.Sprintf("line %d (edit %d) of", k*7, k)}}})
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	h := &Handler{FS: e, KeptDays: 30}
	b.ResetTimer()
	for b.Loop() {
		v, err := h.ChatView(ctx, "r:big", time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if len(v.Changes) != 1000 {
			b.Fatalf("%d changes", len(v.Changes))
		}
		var sb strings.Builder
		if err := ChatPage(ui.Chrome{Title: "Changes", CSRF: "x", Operator: "Ann"}, v).Render(ctx, &sb); err != nil {
			b.Fatal(err)
		}
	}
}

// TestChangedSinceIsNotOfferedAnUndo: a change whose file the person (or
// another program) changed afterwards is neither counted among the
// changes that can be undone nor offered an Undo button (the undo would
// leave the file alone); the page says so. Before, the count and the
// button promised an undo that did nothing.
func TestChangedSinceIsNotOfferedAnUndo(t *testing.T) {
	e, root := newEngine(t)
	ctx := context.Background()
	kept, edited := filepath.Join(root, "kept.txt"), filepath.Join(root, "edited.txt")
	for _, p := range []string{kept, edited} {
		if _, err := e.Write(ctx, "r:chat", fsops.WriteInput{Path: p, Data: "the chat's text\n"}); err != nil {
			t.Fatal(err)
		}
	}
	h := &Handler{FS: e, KeptDays: 30}
	v, err := h.ChatView(ctx, "r:chat", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if v.Undoable != 2 {
		t.Fatalf("before any edit %d changes can be undone, want 2", v.Undoable)
	}
	if err := os.WriteFile(edited, []byte("the person's text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err = h.ChatView(ctx, "r:chat", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, v)
	if v.Undoable != 1 || strings.Count(page, `data-testid="undo-one-button"`) != 1 || !strings.Contains(page, `data-testid="change-changed-since"`) {
		t.Fatalf("after the person edited one file: %d undoable, want 1, one Undo button and the note:\n%s", v.Undoable, page)
	}
	if err := os.Remove(kept); err != nil {
		t.Fatal(err)
	}
	if v, err = h.ChatView(ctx, "r:chat", time.Now()); err != nil || v.Undoable != 0 {
		t.Fatalf("after the person removed the other: %d undoable (%v), want 0", v.Undoable, err)
	}
}

// TestRedoneChangesCanBeUndoneAgain: after Undo all and Redo, the chat's
// changes are in effect again and the page counts and offers them (the
// person's redo does not hide them, nor does their earlier undo), and an
// undo of one of them does what the page offered. Before, the redo's own
// records shadowed the chat's changes and nothing was left to undo.
func TestRedoneChangesCanBeUndoneAgain(t *testing.T) {
	e, root := newEngine(t)
	ctx := context.Background()
	a, b := filepath.Join(root, "a.txt"), filepath.Join(root, "b.txt")
	if err := os.WriteFile(a, []byte("the person's a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{a, b} {
		if _, err := e.Write(ctx, "r:chat", fsops.WriteInput{Path: p, Data: "the chat's text\n"}); err != nil {
			t.Fatal(err)
		}
	}
	undo, err := e.UndoChat(ctx, "Ann", "r:chat")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Redo(ctx, "Ann", "r:chat", undo.Batch); err != nil {
		t.Fatal(err)
	}
	h := &Handler{FS: e, KeptDays: 30}
	v, err := h.ChatView(ctx, "r:chat", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, v)
	if v.Undoable != 2 || strings.Count(page, `data-testid="undo-one-button"`) != 2 {
		t.Fatalf("after the redo %d changes can be undone, want 2 with their Undo buttons:\n%s", v.Undoable, page)
	}
	var id string
	for _, c := range v.Changes {
		if c.Path == a && c.Operator == "" {
			id = c.ID
		}
	}
	rep, err := e.UndoChange(ctx, "Ann", "r:chat", id)
	if err != nil || len(rep.Files) != 1 || rep.Files[0].Outcome != fsops.OutcomeRestored {
		t.Fatalf("undo of the redone change: %+v, %v", rep, err)
	}
	if got, _ := os.ReadFile(a); string(got) != "the person's a\n" {
		t.Fatalf("after its undo a holds %q", got)
	}
}
