package fsops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// askEngine is a test Engine whose allowlist has the test root as the
// home, and a context carrying an admission as ordinary of path (what
// governance hands fs for a call it let run without asking).
func askEngine(t *testing.T) testEnv {
	t.Helper()
	env := newTestEngine(t)
	env.e.Writes = risk.NewWritesFor(runtime.GOOS == "windows", func(k string) string {
		if k == "HOME" || k == "USERPROFILE" {
			return env.root
		}
		return ""
	}, RealPrefix)
	return env
}

func admittedOrdinary(path string) context.Context {
	return withChecked(context.Background(), primitive.Checked{Ordinary: true, Paths: []string{path}})
}

// refusedNotOrdinary fails unless err is the refusal of a write that
// was admitted as ordinary and is not, for why.
func refusedNotOrdinary(t *testing.T, err error, why risk.Why) {
	t.Helper()
	var no *NotOrdinaryError
	if !errors.As(err, &no) || no.Why != why {
		t.Fatalf("want a refusal as not ordinary (%s), got %v", why, err)
	}
}

// TestPatchIsJudgedByTheContentItLeaves: a patch that makes an ordinary
// file start as a program is seen as one at admission (its Target holds
// the start of the patched content, which the allowlist finds a new
// program, as for a write of that content), and, admitted as ordinary
// anyway (the file changed between admission and the run), is refused
// when the file is opened, with nothing written. An ordinary patch of the
// same file still runs.
func TestPatchIsJudgedByTheContentItLeaves(t *testing.T) {
	env := askEngine(t)
	p := env.path("notes.txt")
	if err := os.WriteFile(p, []byte("Dear Ann,\nsee you\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	heads := map[string]string{"pe": "MZ\x90\x00"}
	if runtime.GOOS != "windows" {
		heads["elf"], heads["script"] = "\x7fELF", "#!/bin/sh\n"
	}
	for kind, start := range heads {
		in, _ := json.Marshal(map[string]any{"path": p, "replacements": []Replacement{{Old: "Dear Ann,", New: start + "Dear Ann,"}}})
		tg, err := env.e.patchTarget(context.Background(), "r:c", in)
		if err != nil || len(tg.Files) != 1 {
			t.Fatalf("%s: target %+v %v", kind, tg, err)
		}
		if why, ok := env.e.Writes.Classify(tg.Files[0]); ok || why != risk.WhyNewProgram {
			t.Errorf("%s: a patch making the file a program is %q (ordinary %v) at admission, want %q", kind, why, ok, risk.WhyNewProgram)
		}
		// The same content written whole is judged the same.
		w, _ := json.Marshal(map[string]any{"path": p, "data": start + "Dear Ann,\nsee you\n"})
		wt, err := env.e.writeTarget(context.Background(), "r:c", w)
		if err != nil {
			t.Fatal(err)
		}
		if why, _ := env.e.Writes.Classify(wt.Files[0]); why != risk.WhyNewProgram {
			t.Errorf("%s: the write of that content is %q", kind, why)
		}

		_, err = env.e.Patch(admittedOrdinary(p), "r:c", PatchInput{Path: p, Replacements: []Replacement{{Old: "Dear Ann,", New: start + "Dear Ann,"}}})
		refusedNotOrdinary(t, err, risk.WhyNewProgram)
		if got := mustRead(t, p); got != "Dear Ann,\nsee you\n" {
			t.Fatalf("%s: the file was written: %q", kind, got)
		}
	}
	// Ordinary work is not held up: a patch that keeps the file a letter.
	if _, err := env.e.Patch(admittedOrdinary(p), "r:c", PatchInput{Path: p, Replacements: []Replacement{{Old: "see you", New: "see you soon"}}}); err != nil {
		t.Fatalf("an ordinary patch admitted as ordinary: %v", err)
	}
	in, _ := json.Marshal(map[string]any{"path": p, "replacements": []Replacement{{Old: "soon", New: "later"}}})
	if tg, _ := env.e.patchTarget(context.Background(), "r:c", in); len(tg.Files) != 1 || string(tg.Files[0].NewHead) != "Dear" {
		t.Fatalf("the target of an ordinary patch: %+v", tg)
	}
}

// TestUndoIsJudgedByTheContentItRestores: an undo that would put a
// program's bytes back into a file now ordinary is seen as writing a
// program at admission (its Target holds the start of the restored
// content) and, admitted as ordinary, is refused when the file is opened,
// with nothing written. An undo that restores a letter still runs.
func TestUndoIsJudgedByTheContentItRestores(t *testing.T) {
	env := askEngine(t)
	ctx := context.Background()
	prog, letter := env.path("old.dat"), env.path("letter.txt")
	if err := os.WriteFile(prog, []byte("MZ\x90\x00 a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(letter, []byte("Dear Ann,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Made without an admission (the operator approved replacing the
	// program with text).
	w, err := env.e.Write(ctx, "r:c", WriteInput{Path: prog, Data: "plain text now\n"})
	if err != nil {
		t.Fatal(err)
	}
	wl, err := env.e.Write(ctx, "r:c", WriteInput{Path: letter, Data: "Dear Bob,\n"})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(UndoInput{ReceiptIDs: []string{w.ReceiptID, wl.ReceiptID}})
	tg, err := env.e.undoTarget(ctx, "r:c", in)
	if err != nil || len(tg.Files) != 2 {
		t.Fatalf("undo target %+v %v", tg, err)
	}
	if why, ok := env.e.Writes.Classify(tg.Files[0]); ok || why != risk.WhyNewProgram {
		t.Fatalf("an undo restoring a program is %q (ordinary %v) at admission, want %q", why, ok, risk.WhyNewProgram)
	}
	if why, ok := env.e.Writes.Classify(tg.Files[1]); !ok {
		t.Fatalf("an undo restoring a letter is %q at admission", why)
	}

	_, err = env.e.Undo(admittedOrdinary(prog), "r:c", UndoInput{ReceiptID: w.ReceiptID})
	refusedNotOrdinary(t, err, risk.WhyNewProgram)
	if got := mustRead(t, prog); got != "plain text now\n" {
		t.Fatalf("the program was put back: %q", got)
	}
	if _, err := env.e.Undo(admittedOrdinary(letter), "r:c", UndoInput{ReceiptID: wl.ReceiptID}); err != nil || mustRead(t, letter) != "Dear Ann,\n" {
		t.Fatalf("an ordinary undo admitted as ordinary: %v", err)
	}
	// Approved (no admission as ordinary to hold it to), it runs.
	if _, err := env.e.Undo(ctx, "r:c", UndoInput{ReceiptID: w.ReceiptID}); err != nil || !strings.HasPrefix(mustRead(t, prog), "MZ") {
		t.Fatalf("an approved undo: %v", err)
	}
}

// TestChatCannotUndoTheOperatorsUndo: the receipts of the operator's
// "Undo all" are in the chat's scope, but the chat's fs.undo of one (alone
// or among others) is refused, naming the receipt in plain words, before
// anything is written; fs.changes does not offer it as undoable; the
// operator can still Redo it on the Changes page.
func TestChatCannotUndoTheOperatorsUndo(t *testing.T) {
	env, _ := trashEngine(t)
	ctx := context.Background()
	p, q := env.path("doc.txt"), env.path("other.txt")
	for _, f := range []string{p, q} {
		if err := os.WriteFile(f, []byte("v0"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.e.Write(ctx, "r:c", WriteInput{Path: p, Data: "v1"}); err != nil {
		t.Fatal(err)
	}
	all, err := env.e.UndoChat(ctx, "Ann", "r:c")
	if err != nil || all.Count(OutcomeRestored) != 1 || mustRead(t, p) != "v0" {
		t.Fatalf("undo all: %+v %v", all, err)
	}
	opReceipt := all.Files[0].ReceiptID
	wq, err := env.e.Write(ctx, "r:c", WriteInput{Path: q, Data: "v1"})
	if err != nil {
		t.Fatal(err)
	}

	_, err = env.e.Undo(ctx, "r:c", UndoInput{ReceiptID: opReceipt})
	if !errors.Is(err, ErrOperatorChange) || !strings.Contains(err.Error(), opReceipt) || !strings.Contains(err.Error(), "only the operator") {
		t.Fatalf("the chat's undo of the operator's undo: %v", err)
	}
	pe := mapErr("undo", err).(*primitive.Error)
	if pe.State != primitive.StateBlocked || pe.Code != "operator_change" || !strings.Contains(pe.Message, opReceipt) {
		t.Fatalf("the model is told %+v", pe)
	}
	if _, err := env.e.UndoMany(ctx, "r:c", UndoInput{ReceiptIDs: []string{wq.ReceiptID, opReceipt}}); !errors.Is(err, ErrOperatorChange) {
		t.Fatalf("an undo of several with the operator's among them: %v", err)
	}
	if mustRead(t, p) != "v0" || mustRead(t, q) != "v1" {
		t.Fatalf("files changed by a refused undo: %q %q", mustRead(t, p), mustRead(t, q))
	}
	ch, err := env.e.Changes(ctx, "r:c", ChangesInput{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ch.Changes {
		if c.ReceiptID == opReceipt && (c.Undoable || !c.ByOperator) {
			t.Fatalf("fs.changes offers the operator's undo to the chat: %+v", c)
		}
	}
	// The operator still can.
	if redo, err := env.e.Redo(ctx, "Ann", "r:c", all.Batch); err != nil || redo.Count(OutcomeRestored) != 1 || mustRead(t, p) != "v1" {
		t.Fatalf("the operator's redo: %+v %v", redo, err)
	}
}

// TestUndoneAgreesAtEveryDepth: undos of undos in a row (the chat's undo
// of its own undo, and so on): at every depth, the undo's own check
// (undoneNow), fs.changes (undoable) and the Status page's undo reach say
// the same of the first change: undone at an odd depth, in force at an
// even one. At 3 undos the reach used to count the change as in force.
func TestUndoneAgreesAtEveryDepth(t *testing.T) {
	env := newTestEngine(t)
	var mu sync.Mutex
	clock := time.UnixMilli(1_700_000_000_000)
	env.e.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	ctx := context.Background()
	p := env.path("x.txt")
	if err := os.WriteFile(p, []byte("0"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := env.e.Write(ctx, "r:c", WriteInput{Path: p, Data: "1"})
	if err != nil {
		t.Fatal(err)
	}
	createdAt := func(id string) time.Time {
		var ms int64
		if err := env.e.DB.R.QueryRow(`SELECT created_at FROM fs_receipts WHERE id = ?`, id).Scan(&ms); err != nil {
			t.Fatal(err)
		}
		return time.UnixMilli(ms)
	}
	chain := []string{w.ReceiptID}
	for depth := 1; depth <= 4; depth++ {
		u, err := env.e.Undo(ctx, "r:c", UndoInput{ReceiptID: chain[len(chain)-1]})
		if err != nil {
			t.Fatalf("undo %d: %v", depth, err)
		}
		chain = append(chain, u.ReceiptID)
		undone := depth%2 == 1

		r, err := env.e.loadReceipt(ctx, "r:c", w.ReceiptID)
		if err != nil {
			t.Fatal(err)
		}
		by, err := env.e.undoneNow(ctx, r)
		if err != nil || (by != "") != undone {
			t.Fatalf("depth %d: undoneNow says %q (%v), want undone %v", depth, by, err, undone)
		}
		ch, err := env.e.Changes(ctx, "r:c", ChangesInput{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range ch.Changes {
			if c.ReceiptID == w.ReceiptID && c.Undoable == undone {
				t.Fatalf("depth %d: fs.changes says undoable %v, want %v", depth, c.Undoable, !undone)
			}
		}
		// The oldest change in force: the write, or else the first undo
		// (in force when undone an even number of times).
		want := createdAt(w.ReceiptID)
		if undone {
			want = createdAt(chain[1])
		}
		at, any, err := env.e.UndoReach(ctx)
		if err != nil || !any || !at.Equal(want) {
			t.Fatalf("depth %d: undo reach %v (%v, %v), want %v", depth, at, any, err, want)
		}
	}
}

// admittedInWorkspace is the context of a write of path that a
// workspace covered at admission (a file that is not a document, such as
// git's HEAD, runs without asking only so).
func admittedInWorkspace(path string) context.Context {
	return withChecked(context.Background(), primitive.Checked{Ordinary: true, Covered: true, Paths: []string{path}})
}

// TestOrdinaryWriteRefusedInAPlaceMadeMeanwhile: a write admitted as
// ordinary (a workspace covered it) whose file, when it is opened, has become a persistence place
// (here: objects/ and refs/ appeared beside the HEAD it writes, as
// another call run at the same time could make them, so git would take
// the folder for a repository's own) is refused with nothing written; the
// same write into a folder without them runs.
func TestOrdinaryWriteRefusedInAPlaceMadeMeanwhile(t *testing.T) {
	env := askEngine(t)
	plain := env.path("notes")
	docs := env.path("docs")
	for _, d := range []string{plain, docs + "/objects", docs + "/refs"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ok := plain + string(os.PathSeparator) + "HEAD"
	if _, err := env.e.Write(admittedInWorkspace(ok), "r:c", WriteInput{Path: ok, Data: "ref: refs/heads/main\n"}); err != nil {
		t.Fatalf("a HEAD file in a plain folder: %v", err)
	}
	head := docs + string(os.PathSeparator) + "HEAD"
	_, err := env.e.Write(admittedInWorkspace(head), "r:c", WriteInput{Path: head, Data: "ref: refs/heads/main\n"})
	var no *NotOrdinaryError
	if !errors.As(err, &no) || no.Place == "" || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("a write completing a git folder's shape: %v; want a refusal naming the place", err)
	}
	if _, err := os.Stat(head); !os.IsNotExist(err) {
		t.Fatalf("the refused write left %s (%v)", head, err)
	}
}

// TestWritesThatCanMakeAGitFolderTakeItsLock: writes of HEAD, objects/…
// and refs/… into one folder share that folder's lock (shapeKeys), so
// at the same time they are checked one after the other: whichever comes
// last sees the others on disk and is refused. Other writes take none.
func TestWritesThatCanMakeAGitFolderTakeItsLock(t *testing.T) {
	sep := string(os.PathSeparator)
	root := t.TempDir()
	docs := root + sep + "docs"
	for _, p := range []string{docs + sep + "HEAD", docs + sep + "objects" + sep + "info" + sep + "packs", docs + sep + "refs" + sep + "heads" + sep + "x", docs + sep + "commondir"} {
		if k := shapeKeys(p); len(k) != 1 || k[0] != "git-shape\x00"+pathKey(docs) {
			t.Errorf("%s: keys %q, want docs' one", p, k)
		}
	}
	if k := shapeKeys(docs + sep + "notes.txt"); len(k) != 0 {
		t.Errorf("an ordinary write takes %q", k)
	}

	env := askEngine(t)
	for round := range 20 {
		dir := env.path(fmt.Sprintf("race%d", round))
		parts := []string{dir + sep + "HEAD", dir + sep + "objects" + sep + "x", dir + sep + "refs" + sep + "x"}
		var wg sync.WaitGroup
		errs := make([]error, len(parts))
		for i, p := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = env.e.Write(admittedInWorkspace(p), "r:c", WriteInput{Path: p, Data: "x\n"})
			}()
		}
		wg.Wait()
		refused := 0
		for _, err := range errs {
			if errors.Is(err, ErrNotOrdinary) {
				refused++
			} else if err != nil {
				t.Fatal(err)
			}
		}
		if refused != 1 {
			t.Fatalf("round %d: %d of the three writes refused, want exactly the last one (%v)", round, refused, errs)
		}
		// The refused write left no folder either: an empty objects/ or
		// refs/ would complete the shape for git all the same.
		n := 0
		for _, p := range parts {
			if _, err := os.Stat(filepath.Dir(p)); err == nil && filepath.Dir(p) != dir {
				n++
			}
		}
		if _, err := os.Stat(parts[0]); err == nil {
			n++
		}
		if n != 2 {
			t.Fatalf("round %d: %d of HEAD, objects/ and refs/ are on disk after one write was refused, want 2", round, n)
		}
	}
}
