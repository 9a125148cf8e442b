package fsops

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// emptyFiles makes n empty files in dir.
func emptyFiles(t *testing.T, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+".txt"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A call whose items hold more files than the write check can judge is
// refused whole, naming items, before it runs and when it runs: a big
// first folder never hides what a later item carries from the check.
func TestFileOpBudgetIsTheWholeCall(t *testing.T) {
	env := newTestEngine(t)
	emptyFiles(t, env.path("Documents", "big"), MaxTreeEntries-5)
	writeFile(t, env.path("Documents", "hooks", "z", "b", "pre-commit"), "#!/bin/sh\n")
	for i := range 10 { // walked before z: the budget runs out among them
		writeFile(t, env.path("Documents", "hooks", "a"+strconv.Itoa(i)), "x")
	}
	in := FileOpInput{Items: []FileOpItem{
		{From: env.path("Documents", "big"), To: env.path("Archive", "big")},
		{From: env.path("Documents", "hooks"), To: env.path(".githooks")},
	}}
	raw, _ := json.Marshal(in)
	tg, err := env.e.fileOpTarget(context.Background(), ActionMove, raw)
	var pe *primitive.Error
	if !errors.As(err, &pe) || pe.Code != "invalid_input" || !strings.Contains(pe.Message, `"items"`) {
		t.Fatalf("Target of a call over the budget: err %v, %d paths (pre-commit judged: %v)", err,
			len(tg.Paths), slices.Contains(tg.Paths, env.path(".githooks", "z", "b", "pre-commit")))
	}
	_, err = env.e.FileOp(context.Background(), "r:chat", ActionMove, in)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "items" {
		t.Fatalf("run of a call over the budget: %v", err)
	}
	if !exists(env.path("Documents", "hooks", "z", "b", "pre-commit")) || exists(env.path("Archive")) {
		t.Fatal("a call over the budget moved something")
	}
	// Under the budget, every file is in the Target.
	in.Items = in.Items[1:]
	raw, _ = json.Marshal(in)
	if tg, err = env.e.fileOpTarget(context.Background(), ActionMove, raw); err != nil || !slices.Contains(tg.Paths, env.path(".githooks", "z", "b", "pre-commit")) {
		t.Fatalf("Target under the budget: %v %v", err, tg.Paths)
	}
}

// A link given as the item of a move or a trash is carried itself, never
// followed: the document it points to (here or outside the roots) stays
// as it was, byte for byte, and the undo brings the link back. The call
// is judged at the link's own path by the kind of what it points to, so
// a link to a program asks as the program would. A copy of a link is
// refused (it would copy what it points to).
func TestFileOpCarriesALinkItself(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("making a symbolic link needs a privilege on Windows")
	}
	env := askEngine(t)
	withTrash(t)
	ctx := context.Background()
	outside := filepath.Join(filepath.Dir(env.root), "elsewhere", "secret.txt")
	writeFile(t, outside, "not under a root")
	writeFile(t, env.path("Documents", "notes.txt"), "Dear Ann,\nsee you\n")
	writeFile(t, env.path("Documents", "tool"), "\x7fELF a program")
	if err := os.Chmod(env.path("Documents", "tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	targets := []string{outside, env.path("Documents", "notes.txt"), env.path("Documents", "tool")}
	shas := map[string]string{}
	for _, p := range targets {
		sha, _, err := fileHash(p)
		if err != nil {
			t.Fatal(err)
		}
		shas[p] = sha
	}
	untouched := func(when string) {
		t.Helper()
		for _, p := range targets {
			if sha, _, err := fileHash(p); err != nil || sha != shas[p] {
				t.Fatalf("%s: %s, a link's target, changed or went: %v", when, p, err)
			}
		}
	}
	if err := os.MkdirAll(env.path("Downloads"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := func(name, to string) string {
		p := env.path("Downloads", name)
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	doc := link("shortcut.txt", "../Documents/notes.txt")
	away := link("outside.txt", outside)
	prog := link("report.txt", env.path("Documents", "tool"))
	isLinkTo := func(p, to string) {
		t.Helper()
		if got, err := os.Readlink(p); err != nil || got != to {
			t.Fatalf("%s is not the link to %s: %q %v", p, to, got, err)
		}
	}
	target := func(action string, in FileOpInput) primitive.Target {
		t.Helper()
		raw, _ := json.Marshal(in)
		tg, err := env.e.fileOpTarget(ctx, action, raw)
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	ordinary := func(tg primitive.Target) (risk.Why, bool) {
		for _, f := range tg.Files {
			if why, ok := env.e.Writes.Classify(f); !ok {
				return why, false
			}
		}
		return "", len(tg.Files) > 0
	}

	// A link to a document: judged at its own path, ordinary; moved
	// itself, then back by its undo.
	to := env.path("Archive", "shortcut.txt")
	in := FileOpInput{FileOpItem: FileOpItem{From: doc, To: to}}
	tg := target(ActionMove, in)
	if !slices.Contains(tg.Paths, doc) || slices.Contains(tg.Paths, env.path("Documents", "notes.txt")) {
		t.Fatalf("the move of a link is judged at %v, not at the link's own path", tg.Paths)
	}
	if why, ok := ordinary(tg); !ok {
		t.Fatalf("the move of a link to a document asks (%s)", why)
	}
	res, err := env.e.FileOp(withChecked(ctx, primitive.Checked{Ordinary: true, Paths: tg.Paths}), "r:chat", ActionMove, in)
	if err != nil || res.Status != "completed" || res.Items[0].Type != TypeSymlink {
		t.Fatalf("move of a link: %+v %v", res, err)
	}
	isLinkTo(to, "../Documents/notes.txt")
	if _, err := os.Lstat(doc); err == nil {
		t.Fatal("the link is still at its old place")
	}
	untouched("move")
	if _, err := env.e.Undo(ctx, "r:chat", UndoInput{ReceiptID: res.Items[0].ReceiptID}); err != nil {
		t.Fatalf("undo of the move of a link: %v", err)
	}
	isLinkTo(doc, "../Documents/notes.txt")
	untouched("undo of the move")

	// A link to a file outside the roots: trashed itself, and back.
	res = fileOp(t, env, ActionTrash, FileOpInput{FileOpItem: FileOpItem{Path: away}})
	if res.Status != "completed" {
		t.Fatalf("trash of a link: %+v", res)
	}
	isLinkTo(res.Items[0].Trash, outside)
	untouched("trash")
	if _, err := env.e.Undo(ctx, "r:chat", UndoInput{ReceiptID: res.Items[0].ReceiptID}); err != nil {
		t.Fatalf("undo of the trash of a link: %v", err)
	}
	isLinkTo(away, outside)

	// A link to a program asks, to move it or to trash it, as the
	// program would; admitted as ordinary anyway, it is refused.
	in = FileOpInput{FileOpItem: FileOpItem{From: prog, To: env.path("Archive", "report.txt")}}
	if why, ok := ordinary(target(ActionMove, in)); ok {
		t.Fatal("the move of a link to a program does not ask")
	} else {
		t.Logf("move of a link to a program: %s", why)
	}
	if _, ok := ordinary(target(ActionTrash, FileOpInput{FileOpItem: FileOpItem{Path: prog}})); ok {
		t.Fatal("the trash of a link to a program does not ask")
	}
	res, err = env.e.FileOp(withChecked(ctx, primitive.Checked{Ordinary: true, Paths: target(ActionMove, in).Paths}), "r:chat", ActionMove, in)
	if err != nil || res.Status != "failed" || res.Items[0].Code != "not_ordinary" {
		t.Fatalf("a link to a program admitted as ordinary: %+v %v", res, err)
	}
	isLinkTo(prog, env.path("Documents", "tool"))

	// A copy of a link is refused.
	res = fileOp(t, env, ActionCopy, FileOpInput{FileOpItem: FileOpItem{From: doc, To: env.path("Archive", "c.txt")}})
	if res.Status != "failed" || !strings.Contains(res.Items[0].Error, "is a link") {
		t.Fatalf("copy of a link: %+v", res)
	}
	if exists(env.path("Archive", "c.txt")) {
		t.Fatal("the copy of a link copied something")
	}
	untouched("copy")
}
