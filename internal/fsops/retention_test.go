package fsops

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
)

func countRows(t *testing.T, env testEnv, q string, args ...any) int {
	t.Helper()
	var n int
	if err := env.e.DB.R.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func spillOf(t *testing.T, env testEnv, id string) string {
	t.Helper()
	var f string
	if err := env.e.DB.R.QueryRow(`SELECT COALESCE(prior_file, '') FROM fs_receipts WHERE id = ?`, id).Scan(&f); err != nil {
		t.Fatal(err)
	}
	if f == "" {
		t.Fatalf("receipt %s has no spill file", id)
	}
	return f
}

// TestPruneReceipts writes receipts with an injected clock 40 days in the
// past and one day in the past, prunes at 30 days, and checks what went
// and what stayed.
func TestPruneReceipts(t *testing.T) {
	env := newTestEngine(t)
	env.e.InlinePriorMax = 16
	ctx := context.Background()
	now := time.Now()
	old, recent := now.Add(-40*24*time.Hour), now.Add(-24*time.Hour)
	clock := old
	env.e.Now = func() time.Time { clock = clock.Add(time.Millisecond); return clock }

	// Old: a spilled prior, and a write → patch → undo chain.
	big := env.path("big.txt")
	if err := os.WriteFile(big, []byte(strings.Repeat("prior content ", 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	spilled, err := env.e.Write(ctx, "r", WriteInput{Path: big, Data: "small"})
	if err != nil {
		t.Fatal(err)
	}
	spillFile := spillOf(t, env, spilled.ReceiptID)
	p := env.path("chain.txt")
	w1, err := env.e.Write(ctx, "r", WriteInput{Path: p, Data: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	w2, err := env.e.Patch(ctx, "r", PatchInput{Path: p, Replacements: []Replacement{{"v1", "v2"}}})
	if err != nil {
		t.Fatal(err)
	}
	u1, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: w2.ReceiptID})
	if err != nil {
		t.Fatal(err)
	}
	// An old receipt left pending (a crash Recover has not settled) is
	// never pruned.
	pend, err := env.e.Write(ctx, "r", WriteInput{Path: env.path("pending.txt"), Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.e.DB.W.Exec(`UPDATE fs_receipts SET state = 'pending' WHERE id = ?`, pend.ReceiptID); err != nil {
		t.Fatal(err)
	}

	// Recent: undo the old undo, and a fresh spilled write.
	clock = recent
	u2, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: u1.ReceiptID})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, []byte(strings.Repeat("newer prior ", 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	young, err := env.e.Write(ctx, "r", WriteInput{Path: big, Data: "smaller"})
	if err != nil {
		t.Fatal(err)
	}
	youngSpill := spillOf(t, env, young.ReceiptID)

	env.e.Now = nil
	rep, err := env.e.PruneReceipts(ctx, now.Add(-30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Receipts != 4 || rep.SpillsRemoved != 1 || rep.Deferred != 0 || rep.PriorBytes == 0 {
		t.Fatalf("report %+v; want 4 receipts and 1 spill file removed", rep)
	}
	for _, id := range []string{spilled.ReceiptID, w1.ReceiptID, w2.ReceiptID, u1.ReceiptID} {
		if n := countRows(t, env, `SELECT COUNT(*) FROM fs_receipts WHERE id = ?`, id); n != 0 {
			t.Errorf("old receipt %s kept", id)
		}
		if n := countRows(t, env, `SELECT COUNT(*) FROM fs_receipts_pruned WHERE id = ?`, id); n != 1 {
			t.Errorf("pruned receipt %s left no tombstone", id)
		}
	}
	for _, id := range []string{pend.ReceiptID, u2.ReceiptID, young.ReceiptID} {
		if n := countRows(t, env, `SELECT COUNT(*) FROM fs_receipts WHERE id = ?`, id); n != 1 {
			t.Errorf("receipt %s was pruned", id)
		}
	}
	if _, err := os.Stat(filepath.Join(env.e.SpillDir, spillFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the pruned receipt's spill file is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(env.e.SpillDir, youngSpill)); err != nil {
		t.Errorf("a kept receipt's spill file is gone: %v", err)
	}

	// Undo of a pruned receipt says it expired; the model can act on that.
	_, err = env.e.Undo(ctx, "r", UndoInput{ReceiptID: spilled.ReceiptID})
	var xe *ExpiredReceiptError
	if !errors.As(err, &xe) || !errors.Is(err, ErrReceiptExpired) || errors.Is(err, ErrReceiptNotFound) ||
		!strings.Contains(err.Error(), spilled.ReceiptID) || !strings.Contains(err.Error(), "expired") || !strings.Contains(err.Error(), "pruned") {
		t.Fatalf("undo of a pruned receipt: %v", err)
	}
	var pe *primitive.Error
	if !errors.As(mapErr("undo", err), &pe) || pe.Code != "expired" {
		t.Fatalf("tool error for an expired receipt: %v", mapErr("undo", err))
	}
	if _, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: "rcpt_aaaaaaaaaaaaaaaaaaaa"}); !errors.Is(err, ErrReceiptNotFound) {
		t.Fatalf("a receipt that never existed: %v", err)
	}
	// Kept receipts still undo: the kept undo of a pruned undo, and the
	// young spilled write.
	if _, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: young.ReceiptID}); err != nil {
		t.Fatalf("undo of a kept receipt: %v", err)
	}
	if got := mustRead(t, big); got != strings.Repeat("newer prior ", 10) {
		t.Fatalf("restored %q", got)
	}
	if _, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: u2.ReceiptID}); err != nil {
		t.Fatalf("undo of a kept undo whose target was pruned: %v", err)
	}

	// A second pass finds nothing more.
	if rep, err := env.e.PruneReceipts(ctx, now.Add(-30*24*time.Hour)); err != nil || rep.Receipts != 0 {
		t.Fatalf("second pass: %+v %v", rep, err)
	}
}

// TestPruneReceiptsDefersUndoOfKeptReceipt back-dates an undo receipt but
// not the receipt it undid: deleting the undo would make the kept receipt
// look not undone, so it waits.
func TestPruneReceiptsDefersUndoOfKeptReceipt(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("f.txt")
	w, err := env.e.Write(ctx, "r", WriteInput{Path: p, Data: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: w.ReceiptID})
	if err != nil {
		t.Fatal(err)
	}
	back := time.Now().Add(-60 * 24 * time.Hour).UnixMilli()
	if _, err := env.e.DB.W.Exec(`UPDATE fs_receipts SET created_at = ? WHERE id = ?`, back, u.ReceiptID); err != nil {
		t.Fatal(err)
	}
	rep, err := env.e.PruneReceipts(ctx, time.Now().Add(-30*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Receipts != 0 || rep.Deferred != 1 {
		t.Fatalf("report %+v; want the undo deferred", rep)
	}
	_, err = env.e.Undo(ctx, "r", UndoInput{ReceiptID: w.ReceiptID})
	conflictOf(t, err, ReasonAlreadyUndone)
}

// TestPruneReceiptsIsTransactional makes the deletion of one receipt fail
// and checks that none of that path's receipts, tombstones or spill files
// changed: no half-deleted receipt whose prior content is gone.
func TestPruneReceiptsIsTransactional(t *testing.T) {
	env := newTestEngine(t)
	env.e.InlinePriorMax = 16
	ctx := context.Background()
	p := env.path("f.txt")
	if err := os.WriteFile(p, []byte(strings.Repeat("original ", 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	first, err := env.e.Write(ctx, "r", WriteInput{Path: p, Data: strings.Repeat("second ", 10)})
	if err != nil {
		t.Fatal(err)
	}
	second, err := env.e.Write(ctx, "r", WriteInput{Path: p, Data: "third"})
	if err != nil {
		t.Fatal(err)
	}
	spills := []string{spillOf(t, env, first.ReceiptID), spillOf(t, env, second.ReceiptID)}
	if _, err := env.e.DB.W.Exec(`UPDATE fs_receipts SET created_at = created_at - ?`, int64(90*24*time.Hour/time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := env.e.DB.W.Exec(`CREATE TEMP TRIGGER fail_prune BEFORE DELETE ON fs_receipts WHEN OLD.id = '` + second.ReceiptID + `'
		BEGIN SELECT RAISE(ABORT, 'injected failure'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := env.e.PruneReceipts(ctx, time.Now().Add(-30*24*time.Hour)); err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("prune: %v, want the injected failure", err)
	}
	if n := countRows(t, env, `SELECT COUNT(*) FROM fs_receipts`); n != 2 {
		t.Fatalf("%d receipts left, want both", n)
	}
	if n := countRows(t, env, `SELECT COUNT(*) FROM fs_receipts_pruned`); n != 0 {
		t.Fatalf("%d tombstones after a failed prune", n)
	}
	for _, s := range spills {
		if _, err := os.Stat(filepath.Join(env.e.SpillDir, s)); err != nil {
			t.Fatalf("spill file of a kept receipt removed: %v", err)
		}
	}
	if _, err := env.e.Undo(ctx, "r", UndoInput{ReceiptID: second.ReceiptID}); err != nil {
		t.Fatalf("undo after a failed prune: %v", err)
	}
}

// TestPruneReceiptLookupsUseIndexes checks that the look-ups PruneReceipts
// makes for each receipt search an index instead of scanning every receipt.
func TestPruneReceiptLookupsUseIndexes(t *testing.T) {
	env := newTestEngine(t)
	for q, index := range map[string]string{
		undoneByQuery:     "fs_receipts_undone_by",
		unlinkUndoesQuery: "fs_receipts_undoes",
	} {
		plan, err := env.e.DB.QueryPlan(context.Background(), q, "rcpt_x")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(plan, func(d string) bool { return strings.Contains(d, "SEARCH") && strings.Contains(d, index) }) {
			t.Errorf("%s does not search %s: %q", q, index, plan)
		}
	}
}
