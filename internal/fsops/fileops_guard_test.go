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

// A link given as the item is refused, never followed: trashing or
// moving a shortcut must not trash or move the document it points to.
func TestFileOpRefusesALinkItself(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("making a symbolic link needs a privilege on Windows")
	}
	env := newTestEngine(t)
	withTrash(t)
	writeFile(t, env.path("Documents", "thesis.docx"), "thesis")
	if err := os.MkdirAll(env.path("Downloads"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := env.path("Downloads", "shortcut.docx")
	if err := os.Symlink(env.path("Documents", "thesis.docx"), link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		action string
		in     FileOpInput
	}{
		{ActionTrash, FileOpInput{FileOpItem: FileOpItem{Path: link}}},
		{ActionMove, FileOpInput{FileOpItem: FileOpItem{From: link, To: env.path("Archive", "s.docx")}}},
		{ActionCopy, FileOpInput{FileOpItem: FileOpItem{From: link, To: env.path("Archive", "c.docx")}}},
	} {
		res := fileOp(t, env, c.action, c.in)
		if res.Status != "failed" || !strings.Contains(res.Items[0].Error, "is a link") {
			t.Errorf("%s of a link: %+v", c.action, res)
		}
		if mustRead(t, env.path("Documents", "thesis.docx")) != "thesis" {
			t.Fatalf("%s of a link acted on the document it points to", c.action)
		}
		if _, err := os.Lstat(link); err != nil {
			t.Fatalf("%s of a link: the link is gone: %v", c.action, err)
		}
	}
	if exists(env.path("Archive")) {
		t.Fatal("something was carried")
	}
}
