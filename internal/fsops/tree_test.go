package fsops

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The last step of a move across volumes (moveTree: copy, verify, then
// remove the source) removes only what it copied and verified: a file
// another program writes into the source folder after the copy, or a
// file it changes there, stays in place and is named; the files copied
// as they were go, and a folder only once empty.
func TestMoveAcrossVolumesRemovesOnlyWhatItCopied(t *testing.T) {
	env := newTestEngine(t)
	src, tmp := env.path("Photos"), env.path("copy")
	writeFile(t, filepath.Join(src, "a.jpg"), "a")
	writeFile(t, filepath.Join(src, "album", "b.jpg"), "b")
	writeFile(t, filepath.Join(src, "album", "c.jpg"), "c")
	writeFile(t, filepath.Join(src, "old", "d.jpg"), "d")
	// moveTree's copy phase, as it runs it.
	if err := copyTree(src, tmp); err != nil {
		t.Fatal(err)
	}
	copied, err := verifyTree(src, tmp)
	if err != nil {
		t.Fatal(err)
	}
	// Another program, after the copy: a new file, a changed one.
	writeFile(t, filepath.Join(src, "album", "new.jpg"), "new")
	writeFile(t, filepath.Join(src, "a.jpg"), "a, edited")

	kept, err := removeCopied(src, copied, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(src, "album", "new.jpg")); got != "new" {
		t.Fatalf("the file written meanwhile: %q", got)
	}
	if got := mustRead(t, filepath.Join(src, "a.jpg")); got != "a, edited" {
		t.Fatalf("the file changed meanwhile: %q", got)
	}
	for _, gone := range []string{"album/b.jpg", "album/c.jpg", "old/d.jpg", "old"} {
		if exists(filepath.Join(src, gone)) {
			t.Fatalf("%s, copied and unchanged, is still at the source", gone)
		}
	}
	slices.Sort(kept)
	want := []string{filepath.Join(src, "a.jpg"), filepath.Join(src, "album", "new.jpg")}
	if !slices.Equal(kept, want) {
		t.Fatalf("kept %v, want %v", kept, want)
	}
	msg := (&keptError{From: src, To: tmp, Kept: kept}).Error()
	if !strings.Contains(msg, "new.jpg") || !strings.Contains(msg, "nothing was lost") {
		t.Fatalf("the answer does not name what stayed: %s", msg)
	}

	// Nothing changed meanwhile: the whole source goes, a file alone too.
	writeFile(t, env.path("one.txt"), "one")
	if err := copyTree(env.path("one.txt"), env.path("one copy.txt")); err != nil {
		t.Fatal(err)
	}
	copied, err = verifyTree(env.path("one.txt"), env.path("one copy.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if kept, err := removeCopied(env.path("one.txt"), copied, nil); err != nil || len(kept) > 0 || exists(env.path("one.txt")) {
		t.Fatalf("a file copied as it is: kept %v, err %v, still there %v", kept, err, exists(env.path("one.txt")))
	}
	if kept, err := removeCopied(src, []copiedEntry{{rel: ".", dir: true}}, nil); err != nil || len(kept) != 2 {
		t.Fatalf("again: kept %v, err %v", kept, err)
	}
}
