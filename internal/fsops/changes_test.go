package fsops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestChangesListsOwnReceiptsWithCursor(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	var ids []string
	for i := range 5 {
		r, err := env.e.Write(ctx, "r:one", WriteInput{Path: env.path(fmt.Sprintf("f%d.txt", i)), Data: "x"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ReceiptID)
	}
	if _, err := env.e.Write(ctx, "r:other", WriteInput{Path: env.path("other.txt"), Data: "y"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	cursor := ""
	for page := 0; ; page++ {
		res, err := env.e.Changes(ctx, "r:one", ChangesInput{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Changes) > 2 {
			t.Fatalf("limit 2 gave %d", len(res.Changes))
		}
		for _, c := range res.Changes {
			got = append(got, c.ReceiptID)
			if !c.Undoable || c.Operation != "write" || c.PreSHA256 != nil || c.PostSHA256 == nil {
				t.Fatalf("change %+v", c)
			}
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
		if page > 5 {
			t.Fatal("cursor does not advance")
		}
	}
	if len(got) != 5 {
		t.Fatalf("listed %v, want the 5 own receipts", got)
	}
	for i := range got {
		if got[i] != ids[len(ids)-1-i] {
			t.Fatalf("order %v, want newest first of %v", got, ids)
		}
	}
	var ie *InputError
	if _, err := env.e.Changes(ctx, "r:one", ChangesInput{Cursor: "nonsense"}); !errors.As(err, &ie) || ie.Field != "cursor" {
		t.Fatalf("bad cursor: %v", err)
	}
}

func TestUndoManyCompletedPartialConflictAndBounds(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	a, b := env.path("a.txt"), env.path("b.txt")
	os.WriteFile(a, []byte("a0"), 0o644)
	os.WriteFile(b, []byte("b0"), 0o644)
	w1, _ := env.e.Write(ctx, "r:c", WriteInput{Path: a, Data: "a1"})
	w2, _ := env.e.Write(ctx, "r:c", WriteInput{Path: a, Data: "a2"})
	w3, _ := env.e.Write(ctx, "r:c", WriteInput{Path: b, Data: "b1"})

	// Over the bound: the error names the field, nothing changes.
	many := make([]string, MaxUndoIDs+1)
	for i := range many {
		many[i] = newReceiptID()
	}
	var ie *InputError
	if _, err := env.e.UndoMany(ctx, "r:c", UndoInput{ReceiptIDs: many}); !errors.As(err, &ie) || ie.Field != "receipt_ids" {
		t.Fatalf("101 ids: %v", err)
	}
	// A receipt of another conversation is not found, and nothing runs.
	if _, err := env.e.UndoMany(ctx, "r:other", UndoInput{ReceiptIDs: []string{w1.ReceiptID}}); !errors.Is(err, ErrReceiptNotFound) {
		t.Fatalf("foreign: %v", err)
	}
	if mustRead(t, a) != "a2" {
		t.Fatal("a refused undo changed a file")
	}

	// b edited by the person: partial, a fully back (both steps, newest first).
	os.WriteFile(b, []byte("edited"), 0o644)
	res, err := env.e.UndoMany(ctx, "r:c", UndoInput{ReceiptIDs: []string{w1.ReceiptID, w2.ReceiptID, w3.ReceiptID}})
	if !errors.Is(err, ErrUndoPartial) {
		t.Fatalf("want partial, got %v", err)
	}
	if len(res.Undone) != 2 || len(res.Conflicts) != 1 || res.Conflicts[0].Path != b {
		t.Fatalf("result %+v", res)
	}
	if mustRead(t, a) != "a0" || mustRead(t, b) != "edited" {
		t.Fatalf("a=%q b=%q", mustRead(t, a), mustRead(t, b))
	}
	ans, perr := undoManyAnswer(res, err)
	if ans != nil || perr == nil || !strings.Contains(perr.Error(), "2 undone") {
		t.Fatalf("partial answer %v %v", ans, perr)
	}
	// All conflict now (already undone, changed).
	if _, err := env.e.UndoMany(ctx, "r:c", UndoInput{ReceiptIDs: []string{w1.ReceiptID, w3.ReceiptID}}); !errors.Is(err, ErrConflict) || errors.Is(err, ErrUndoPartial) {
		t.Fatalf("want conflict, got %v", err)
	}
	if _, err := env.e.UndoMany(ctx, "r:c", UndoInput{ReceiptID: w1.ReceiptID, ReceiptIDs: []string{w2.ReceiptID}}); !errors.As(err, &ie) {
		t.Fatalf("both fields: %v", err)
	}
}

// trashEngine is a test engine whose removals go to a trash under the test's
// own XDG_DATA_HOME.
func trashEngine(t *testing.T) (testEnv, string) {
	env := newTestEngine(t)
	xdg := t.TempDir()
	t.Setenv("XDG_DATA_HOME", xdg)
	env.e.Replacer.Remove = MoveToTrash
	return env, filepath.Join(xdg, "Trash")
}

func TestUndoChatRestoresTrashesSkipsAndRedoes(t *testing.T) {
	if os.Getenv("WINELOADER") != "" || filepath.Separator == '\\' {
		t.Skip("the freedesktop trash is checked on Linux; the Recycle Bin by the Windows test")
	}
	env, trash := trashEngine(t)
	ctx := context.Background()
	const chat = "r:chat"
	p1, p2, edited, created := env.path("one.txt"), env.path("two.txt"), env.path("edited.txt"), env.path("new.txt")
	for p, s := range map[string]string{p1: "one\n", p2: "two\n", edited: "mine\n"} {
		os.WriteFile(p, []byte(s), 0o644)
	}
	env.e.Write(ctx, chat, WriteInput{Path: p1, Data: "one by chat\n"})
	env.e.Patch(ctx, chat, PatchInput{Path: p2, Replacements: []Replacement{{Old: "two", New: "2"}}})
	env.e.Patch(ctx, chat, PatchInput{Path: p2, Replacements: []Replacement{{Old: "2", New: "II"}}})
	env.e.Write(ctx, chat, WriteInput{Path: edited, Data: "chat's\n"})
	env.e.Write(ctx, chat, WriteInput{Path: created, Data: "brand new\n"})
	os.WriteFile(edited, []byte("mine again\n"), 0o644) // the person edits it meanwhile

	rep, err := env.e.UndoChat(ctx, "Ann", chat)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count(OutcomeRestored) != 2 || rep.Count(OutcomeTrashed) != 1 || rep.Count(OutcomeChanged) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if mustRead(t, p1) != "one\n" || mustRead(t, p2) != "two\n" || mustRead(t, edited) != "mine again\n" {
		t.Fatal("files not as before the chat")
	}
	if _, err := os.Stat(created); !os.IsNotExist(err) {
		t.Fatal("created file still there")
	}
	if b, err := os.ReadFile(filepath.Join(trash, "files", "new.txt")); err != nil || string(b) != "brand new\n" {
		t.Fatalf("trash holds %q, %v", b, err)
	}
	info, err := os.ReadFile(filepath.Join(trash, "info", "new.txt.trashinfo"))
	if err != nil || !strings.Contains(string(info), "Path="+created) {
		t.Fatalf("trashinfo %q, %v", info, err)
	}
	// A second Undo all finds nothing left to do.
	again, err := env.e.UndoChat(ctx, "Ann", chat)
	if err != nil || again.Count(OutcomeUnchanged) != 3 || again.Count(OutcomeChanged) != 1 {
		t.Fatalf("again %+v %v", again, err)
	}

	redo, err := env.e.Redo(ctx, "Ann", chat, rep.Batch)
	if err != nil || redo.Count(OutcomeRestored) != 3 {
		t.Fatalf("redo %+v %v", redo, err)
	}
	if mustRead(t, p1) != "one by chat\n" || mustRead(t, p2) != "II\n" || mustRead(t, created) != "brand new\n" {
		t.Fatal("redo did not bring the chat's content back")
	}
	// After the redo, Undo all works again.
	third, err := env.e.UndoChat(ctx, "Ann", chat)
	if err != nil || third.Count(OutcomeRestored) != 2 || third.Count(OutcomeTrashed) != 1 {
		t.Fatalf("undo after redo %+v %v", third, err)
	}
	// The chat's receipts are undone, and the model sees the operator's.
	ch, err := env.e.Changes(ctx, chat, ChangesInput{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	byOp := 0
	for _, c := range ch.Changes {
		if c.ByOperator {
			byOp++
		}
	}
	if byOp != 9 {
		t.Fatalf("%d operator receipts listed, want 9", byOp)
	}
}

// TestUndoChatOfChangesInOneMillisecond: a chat's changes made within one
// millisecond (a fast machine, a stopped clock here) are told apart by the
// order they were made in, not by their random ids: Undo all sees a file
// patched twice as the chat left it, and undoes both.
func TestUndoChatOfChangesInOneMillisecond(t *testing.T) {
	if os.Getenv("WINELOADER") != "" || filepath.Separator == '\\' {
		t.Skip("the freedesktop trash is checked on Linux")
	}
	env, _ := trashEngine(t)
	at := time.UnixMilli(1_800_000_000_000)
	env.e.Now = func() time.Time { return at }
	ctx := context.Background()
	const chat = "r:chat"
	// Several files, so that ids in the wrong order are all but certain
	// to show on one of them.
	var paths []string
	for i := range 8 {
		p := env.path(fmt.Sprintf("f%d.txt", i))
		paths = append(paths, p)
		writeFile(t, p, "one\n")
		for _, r := range []Replacement{{Old: "one", New: "two"}, {Old: "two", New: "three"}, {Old: "three", New: "four"}} {
			if _, err := env.e.Patch(ctx, chat, PatchInput{Path: p, Replacements: []Replacement{r}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	rep, err := env.e.UndoChat(ctx, "Ann", chat)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count(OutcomeRestored) != len(paths) || rep.Count(OutcomeChanged) != 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, p := range paths {
		if got := mustRead(t, p); got != "one\n" {
			t.Fatalf("%s holds %q after Undo all, want its content before the chat", p, got)
		}
	}
	redo, err := env.e.Redo(ctx, "Ann", chat, rep.Batch)
	if err != nil || redo.Count(OutcomeRestored) != len(paths) {
		t.Fatalf("redo %+v %v", redo, err)
	}
	for _, p := range paths {
		if got := mustRead(t, p); got != "four\n" {
			t.Fatalf("%s holds %q after the redo, want the chat's last content", p, got)
		}
	}
}

func TestMoveToTrashNamesCollide(t *testing.T) {
	if filepath.Separator == '\\' {
		t.Skip("freedesktop trash")
	}
	env, trash := trashEngine(t)
	for i := range 2 {
		p := env.path("same.txt")
		os.WriteFile(p, []byte{byte('a' + i)}, 0o644)
		if err := MoveToTrash(p); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(trash, "files", "same.txt.2")); string(b) != "b" {
		t.Fatalf("second trashed file holds %q", b)
	}
}

func TestUndoChangeOneThenRedo(t *testing.T) {
	env, _ := trashEngine(t)
	ctx := context.Background()
	p := env.path("doc.txt")
	os.WriteFile(p, []byte("v0"), 0o644)
	w1, _ := env.e.Write(ctx, "r:c", WriteInput{Path: p, Data: "v1"})
	w2, _ := env.e.Write(ctx, "r:c", WriteInput{Path: p, Data: "v2"})
	// The older change is not the file's state any more: left alone.
	rep, err := env.e.UndoChange(ctx, "Ann", "r:c", w1.ReceiptID)
	if err != nil || len(rep.Files) != 1 || rep.Files[0].Outcome != OutcomeChanged {
		t.Fatalf("undo of the older change: %+v %v", rep, err)
	}
	rep, err = env.e.UndoChange(ctx, "Ann", "r:c", w2.ReceiptID)
	if err != nil || rep.Files[0].Outcome != OutcomeRestored || mustRead(t, p) != "v1" {
		t.Fatalf("undo of the newest change: %+v %v", rep, err)
	}
	if _, err := env.e.UndoChange(ctx, "Ann", "r:other", w2.ReceiptID); !errors.Is(err, ErrReceiptNotFound) {
		t.Fatalf("another chat's key: %v", err)
	}
	redo, err := env.e.Redo(ctx, "Ann", "r:c", rep.Batch)
	if err != nil || redo.Count(OutcomeRestored) != 1 || mustRead(t, p) != "v2" {
		t.Fatalf("redo: %+v %v", redo, err)
	}
	if _, err := env.e.UndoChat(ctx, "", "r:c"); err == nil {
		t.Fatal("an undo without the operator's name")
	}
}

// TestUndoChangeAfterUndoAllAndRedo: after an Undo all and its Redo, the
// chat's changes are in force again, so "Undo this change" on the newest
// one undoes it (it used to answer "already undone").
func TestUndoChangeAfterUndoAllAndRedo(t *testing.T) {
	env, _ := trashEngine(t)
	ctx := context.Background()
	p := env.path("doc.txt")
	os.WriteFile(p, []byte("v0"), 0o644)
	if _, err := env.e.Write(ctx, "r:c", WriteInput{Path: p, Data: "v1"}); err != nil {
		t.Fatal(err)
	}
	w2, err := env.e.Write(ctx, "r:c", WriteInput{Path: p, Data: "v2"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := env.e.UndoChat(ctx, "Ann", "r:c")
	if err != nil || all.Count(OutcomeRestored) != 1 || mustRead(t, p) != "v0" {
		t.Fatalf("undo all: %+v %v", all, err)
	}
	if redo, err := env.e.Redo(ctx, "Ann", "r:c", all.Batch); err != nil || redo.Count(OutcomeRestored) != 1 || mustRead(t, p) != "v2" {
		t.Fatalf("redo: %+v %v", redo, err)
	}
	one, err := env.e.UndoChange(ctx, "Ann", "r:c", w2.ReceiptID)
	if err != nil || len(one.Files) != 1 || one.Files[0].Outcome != OutcomeRestored || mustRead(t, p) != "v1" {
		t.Fatalf("undo this change after a redo: %+v %v", one, err)
	}
	// Undone again now: a second try is refused as already undone.
	again, err := env.e.UndoChange(ctx, "Ann", "r:c", w2.ReceiptID)
	if err != nil || again.Files[0].Outcome != OutcomeUnchanged || again.Files[0].Why != "already undone" || mustRead(t, p) != "v1" {
		t.Fatalf("second undo of the same change: %+v %v", again, err)
	}
}

func TestUndoReachFollowsUndoAndRedo(t *testing.T) {
	env, _ := trashEngine(t)
	ctx := context.Background()
	if _, any, err := env.e.UndoReach(ctx); err != nil || any {
		t.Fatalf("empty: %v %v", any, err)
	}
	p := env.path("x.txt")
	os.WriteFile(p, []byte("0"), 0o644)
	w, _ := env.e.Write(ctx, "r:c", WriteInput{Path: p, Data: "1"})
	at, any, err := env.e.UndoReach(ctx)
	if err != nil || !any || at.IsZero() {
		t.Fatalf("after a write: %v %v %v", at, any, err)
	}
	rep, _ := env.e.UndoChat(ctx, "Ann", "r:c")
	if _, any, _ := env.e.UndoReach(ctx); any {
		t.Fatal("undoable after Undo all")
	}
	env.e.Redo(ctx, "Ann", "r:c", rep.Batch)
	if _, any, _ := env.e.UndoReach(ctx); !any {
		t.Fatalf("not undoable after the redo brought %s back", w.ReceiptID)
	}
}

// TestRedoTakesTrashedFilesBack: Redo of an "Undo all" takes each file
// the undo put in the trash back out of it, so the trash keeps no copy of
// a file that is back in its place; a file emptied from the trash
// meanwhile is written from the kept copy instead.
func TestRedoTakesTrashedFilesBack(t *testing.T) {
	if os.Getenv("WINELOADER") != "" || filepath.Separator == '\\' {
		t.Skip("the freedesktop trash is checked on Linux")
	}
	env, trash := trashEngine(t)
	ctx := context.Background()
	const chat = "r:chat"
	changed, made, gone := env.path("changed.txt"), env.path("made.txt"), env.path("gone.txt")
	os.WriteFile(changed, []byte("before\n"), 0o644)
	for p, s := range map[string]string{changed: "by chat\n", made: "made by chat\n", gone: "also made\n"} {
		if _, err := env.e.Write(ctx, chat, WriteInput{Path: p, Data: s}); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := env.e.UndoChat(ctx, "Ann", chat)
	if err != nil || rep.Count(OutcomeTrashed) != 2 || rep.Count(OutcomeRestored) != 1 {
		t.Fatalf("undo all %+v %v", rep, err)
	}
	// The person empties one of the two from the trash.
	for _, p := range []string{filepath.Join(trash, "files", "gone.txt"), filepath.Join(trash, "info", "gone.txt.trashinfo")} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	redo, err := env.e.Redo(ctx, "Ann", chat, rep.Batch)
	if err != nil || redo.Count(OutcomeRestored) != 3 {
		t.Fatalf("redo %+v %v", redo, err)
	}
	for p, s := range map[string]string{changed: "by chat\n", made: "made by chat\n", gone: "also made\n"} {
		if mustRead(t, p) != s {
			t.Fatalf("%s is %q after the redo, want %q", p, mustRead(t, p), s)
		}
	}
	for _, d := range []string{"files", "info"} {
		left, err := os.ReadDir(filepath.Join(trash, d))
		if err != nil {
			t.Fatal(err)
		}
		for _, de := range left {
			t.Errorf("the trash still holds %s/%s after the redo", d, de.Name())
		}
	}
	// Undo all again puts them in the trash again, and a second Redo
	// takes them back again.
	again, err := env.e.UndoChat(ctx, "Ann", chat)
	if err != nil || again.Count(OutcomeTrashed) != 2 {
		t.Fatalf("undo all again %+v %v", again, err)
	}
	if redo, err := env.e.Redo(ctx, "Ann", chat, again.Batch); err != nil || redo.Count(OutcomeRestored) != 3 {
		t.Fatalf("second redo %+v %v", redo, err)
	}
	if left, _ := os.ReadDir(filepath.Join(trash, "files")); len(left) != 0 {
		t.Fatalf("the trash holds %d items after the second redo", len(left))
	}
}
