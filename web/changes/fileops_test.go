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
)

// moveBatch moves n documents from root/Downloads to root/Documents/Invoices
// in one call of the chat route and returns their old paths.
func moveBatch(t testing.TB, e *fsops.Engine, root, route string, n int) []string {
	t.Helper()
	var items []fsops.FileOpItem
	var olds []string
	for i := range n {
		p := filepath.Join(root, "Downloads", fmt.Sprintf("invoice %04d.pdf", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("%%PDF-1.4 invoice %d", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		olds = append(olds, p)
		items = append(items, fsops.FileOpItem{From: p, To: filepath.Join(root, "Documents", "Invoices")})
	}
	res, err := e.FileOp(context.Background(), route, fsops.ActionMove, fsops.FileOpInput{Items: items})
	if err != nil || res.Status != "completed" {
		t.Fatalf("move: %+v %v", res.Status, err)
	}
	return olds
}

// TestABatchIsOneChange: a call that moved 37 files is one change on the
// page, said in one sentence, with its list one click away; undoing that
// change moves all 37 back.
func TestABatchIsOneChange(t *testing.T) {
	e, root := newEngine(t)
	t.Setenv("HOME", root)
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	olds := moveBatch(t, e, root, "r:tidy", 37)
	h := &Handler{FS: e}
	v, err := h.ChatView(context.Background(), "r:tidy", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Changes) != 1 || v.Own != 1 || v.Undoable != 1 {
		t.Fatalf("%d rows, own %d, undoable %d; want one change", len(v.Changes), v.Own, v.Undoable)
	}
	want := "moved 37 files from Downloads to " + filepath.Join("Documents", "Invoices")
	if got := v.Changes[0].What(); got != want {
		t.Fatalf("What() = %q, want %q", got, want)
	}
	page := render(t, v)
	for _, s := range []string{want, "The 37 items", `name="call_batch"`, "invoice 0036.pdf"} {
		if !strings.Contains(page, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	rep, err := e.UndoCallBatch(context.Background(), "Ann", "r:tidy", v.Changes[0].CallBatch)
	if err != nil || rep.Count(fsops.OutcomeRestored) != 37 {
		t.Fatalf("undo of the batch: %d restored, %v", rep.Count(fsops.OutcomeRestored), err)
	}
	for _, p := range olds {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is not back: %v", p, err)
		}
	}
}

// BenchmarkChangesPageOf1000Moves renders the Changes page of a chat
// that moved 1,000 files in one call (read and render, as a request of
// the page does).
func BenchmarkChangesPageOf1000Moves(b *testing.B) {
	e, root := newEngine(b)
	b.Setenv("HOME", root)
	moveBatch(b, e, root, "r:bench", 1000)
	h := &Handler{FS: e}
	b.ResetTimer()
	for b.Loop() {
		v, err := h.ChatView(context.Background(), "r:bench", time.Now())
		if err != nil {
			b.Fatal(err)
		}
		render(b, v)
	}
}

// TestMovedAndEditedIsNotOfferedAnUndo: a file the chat moved and the
// person edited afterwards, at its new place, is neither counted nor
// offered an Undo (the undo would leave it alone), and the page says so;
// the same for a trashed file the person took out of the bin. Before,
// only writes were checked, and the page offered an undo that did
// nothing.
func TestMovedAndEditedIsNotOfferedAnUndo(t *testing.T) {
	e, root := newEngine(t)
	t.Setenv("HOME", root)
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	ctx := context.Background()
	h := &Handler{FS: e, KeptDays: 30}
	moved := filepath.Join(root, "Documents", "Invoices", "invoice 0000.pdf")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	moveBatch(t, e, root, "r:chat", 1)
	v, err := h.ChatView(ctx, "r:chat", time.Now())
	if err != nil || v.Undoable != 1 {
		t.Fatalf("before any edit %d changes can be undone (%v), want 1", v.Undoable, err)
	}
	if err := os.WriteFile(moved, []byte("%PDF-1.4 the person's invoice"), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err = h.ChatView(ctx, "r:chat", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, v)
	if v.Undoable != 0 || strings.Contains(page, `data-testid="undo-one-button"`) || !strings.Contains(page, `data-testid="change-changed-since"`) {
		t.Fatalf("after the person edited the moved file: %d undoable, want 0, no Undo button and the note:\n%s", v.Undoable, page)
	}

	gone := filepath.Join(root, "gone.txt")
	if err := os.WriteFile(gone, []byte("old notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := e.FileOp(ctx, "r:bin", fsops.ActionTrash, fsops.FileOpInput{Items: []fsops.FileOpItem{{Path: gone}}})
	if err != nil || res.Status != "completed" {
		t.Fatalf("trash: %+v %v", res.Status, err)
	}
	if v, err = h.ChatView(ctx, "r:bin", time.Now()); err != nil || v.Undoable != 1 || len(v.Changes) != 1 || v.Changes[0].Bin == "" {
		t.Fatalf("before the bin was emptied %d changes can be undone (%v), want 1 that knows its place in the bin", v.Undoable, err)
	}
	if err := os.RemoveAll(v.Changes[0].Bin); err != nil {
		t.Fatal(err)
	}
	v, err = h.ChatView(ctx, "r:bin", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	page = render(t, v)
	if v.Undoable != 0 || strings.Contains(page, `data-testid="undo-one-button"`) || !strings.Contains(page, `data-testid="change-changed-since"`) {
		t.Fatalf("after the person emptied the bin: %d undoable, want 0, no Undo button and the note:\n%s", v.Undoable, page)
	}
}
