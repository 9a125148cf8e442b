package fsops

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// TestUndoIsScopedToTheConversation checks the engine-level rule: a
// receipt is undone only by a caller in its route's scope; everyone else
// gets the error of an id that never existed, word for word, and nothing
// changes.
func TestUndoIsScopedToTheConversation(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("owned.txt")
	if _, err := env.e.Write(ctx, "conv-a", WriteInput{Path: p, Data: "v1"}); err != nil {
		t.Fatal(err)
	}
	patched, err := env.e.Patch(ctx, "conv-a", PatchInput{Path: p, Replacements: []Replacement{{"v1", "v2"}}})
	if err != nil {
		t.Fatal(err)
	}
	const missing = "rcpt_aaaaaaaaaaaaaaaaaaaa"
	// notFoundAs fails unless err is what route would get for an id that
	// never existed, with id in its place.
	notFoundAs := func(who, route, id string, err error) {
		t.Helper()
		_, errMissing := env.e.Undo(ctx, route, UndoInput{ReceiptID: missing})
		want := strings.ReplaceAll(errMissing.Error(), missing, id)
		if !errors.Is(err, ErrReceiptNotFound) || errors.Is(err, ErrReceiptExpired) || err.Error() != want {
			t.Fatalf("%s: %v, want %q", who, err, want)
		}
		got, wantTool := mapErr("undo", err).Error(), strings.ReplaceAll(mapErr("undo", errMissing).Error(), missing, id)
		if got != wantTool {
			t.Fatalf("%s: tool error %q, want %q", who, got, wantTool)
		}
	}
	receipts := countRows(t, env, `SELECT COUNT(*) FROM fs_receipts`)
	for _, route := range []string{"conv-b", "anon:req_1", ""} {
		_, err := env.e.Undo(ctx, route, UndoInput{ReceiptID: patched.ReceiptID})
		notFoundAs("undo by "+route, route, patched.ReceiptID, err)
	}
	if got := mustRead(t, p); got != "v2" {
		t.Fatalf("a refused undo changed the file: %q", got)
	}
	if n := countRows(t, env, `SELECT COUNT(*) FROM fs_receipts`); n != receipts {
		t.Fatalf("refused undos left %d receipts, want %d", n, receipts)
	}

	// The owner undoes; the undo's own receipt is the owner's too.
	u, err := env.e.Undo(ctx, "conv-a", UndoInput{ReceiptID: patched.ReceiptID})
	if err != nil || mustRead(t, p) != "v1" {
		t.Fatalf("owner undo: %v", err)
	}
	_, err = env.e.Undo(ctx, "conv-b", UndoInput{ReceiptID: u.ReceiptID})
	notFoundAs("undo of the owner's undo", "conv-b", u.ReceiptID, err)
	// Another conversation cannot learn that it was already undone either.
	_, err = env.e.Undo(ctx, "conv-b", UndoInput{ReceiptID: patched.ReceiptID})
	notFoundAs("undo of an undone receipt", "conv-b", patched.ReceiptID, err)
	_, err = env.e.Undo(ctx, "conv-a", UndoInput{ReceiptID: patched.ReceiptID})
	conflictOf(t, err, ReasonAlreadyUndone)

	// Anonymous requests share one scope, apart from every conversation.
	q := env.path("anon.txt")
	aw, err := env.e.Write(ctx, "anon:req_1", WriteInput{Path: q, Data: "anon"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = env.e.Undo(ctx, "conv-a", UndoInput{ReceiptID: aw.ReceiptID})
	notFoundAs("a conversation undoing an anonymous receipt", "conv-a", aw.ReceiptID, err)
	if _, err := env.e.Undo(ctx, "anon:req_2", UndoInput{ReceiptID: aw.ReceiptID}); err != nil {
		t.Fatalf("another anonymous request: %v", err)
	}
}

// TestExpiredReceiptIsToldOnlyToItsOwner prunes a conversation's receipt:
// its owner hears it expired, everyone else that it does not exist, and a
// tombstone from before owners were kept (route NULL) is not found for all.
func TestExpiredReceiptIsToldOnlyToItsOwner(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	w, err := env.e.Write(ctx, "conv-a", WriteInput{Path: env.path("old.txt"), Data: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := env.e.PruneReceipts(ctx, time.Now().Add(time.Hour)); err != nil || rep.Receipts != 1 {
		t.Fatalf("prune: %+v %v", rep, err)
	}
	if n := countRows(t, env, `SELECT COUNT(*) FROM fs_receipts_pruned WHERE id = ? AND route = 'conv-a'`, w.ReceiptID); n != 1 {
		t.Fatalf("the tombstone does not name its owner")
	}
	_, err = env.e.Undo(ctx, "conv-a", UndoInput{ReceiptID: w.ReceiptID})
	if !errors.Is(err, ErrReceiptExpired) {
		t.Fatalf("owner: %v, want expired", err)
	}
	const missing = "rcpt_aaaaaaaaaaaaaaaaaaaa"
	_, errMissing := env.e.Undo(ctx, "conv-b", UndoInput{ReceiptID: missing})
	want := strings.ReplaceAll(errMissing.Error(), missing, w.ReceiptID)
	_, err = env.e.Undo(ctx, "conv-b", UndoInput{ReceiptID: w.ReceiptID})
	if !errors.Is(err, ErrReceiptNotFound) || err.Error() != want {
		t.Fatalf("another conversation: %v, want %q", err, want)
	}
	var pe *primitive.Error
	if !errors.As(mapErr("undo", err), &pe) || pe.Code != "not_found" {
		t.Fatalf("tool error: %v", mapErr("undo", err))
	}

	if _, err := env.e.DB.W.Exec(`UPDATE fs_receipts_pruned SET route = NULL WHERE id = ?`, w.ReceiptID); err != nil {
		t.Fatal(err)
	}
	_, err = env.e.Undo(ctx, "conv-a", UndoInput{ReceiptID: w.ReceiptID})
	if !errors.Is(err, ErrReceiptNotFound) {
		t.Fatalf("a tombstone without owner: %v, want not found", err)
	}
}
