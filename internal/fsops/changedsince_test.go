package fsops

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"
)

// TestSinceCheckBoundsWhatItReads: a check reads no more than its budget
// in all (a file it has no budget left for counts as unchanged), a file
// whose size differs from the change's is changed without being read, a
// file its cache knows costs nothing, and a removed or made file is told
// by its existence.
func TestSinceCheckBoundsWhatItReads(t *testing.T) {
	env := newTestEngine(t)
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	a, b := env.path("a.txt"), env.path("b.txt")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("edited by the person"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	left := sum("written by the chat") // the same size as the edit
	const n = int64(len("edited by the person"))

	c := env.e.NewSinceCheck(n)
	if !c.Changed(a, left, -1) {
		t.Fatal("a file edited since counts as unchanged")
	}
	if c.Changed(b, left, -1) {
		t.Fatal("a second file was read past the budget")
	}
	if !c.Changed(b, left, n+1) {
		t.Fatal("a file of another size than the change left counts as unchanged")
	}
	if !c.Changed(a, left, -1) {
		t.Fatal("a file already hashed counts as unchanged once the budget is spent")
	}
	if c.Changed(a, sum("edited by the person"), -1) {
		t.Fatal("a file as the change left it counts as changed")
	}
	if !c.Changed(env.path("gone.txt"), left, -1) || c.Changed(env.path("gone.txt"), "", -1) || !c.Changed(a, "", -1) {
		t.Fatal("a removed or made file is told wrong")
	}
}

// TestSinceCheckOfOneDriveFiles: a OneDrive file (Go on Windows marks it
// irregular; fakeOneDrive) is checked as the file it is: edited since, it
// is changed; and one not on this PC is not read, which would have
// Windows download it for a page, so it counts as unchanged, as a file
// past the budget does (the undo still checks it).
func TestSinceCheckOfOneDriveFiles(t *testing.T) {
	env := newTestEngine(t)
	here, away := env.path("OneDrive", "here.txt"), env.path("OneDrive", "away.txt")
	writeFiles(t, map[string]string{here: "edited by the person", away: "edited by the person"})
	env.e.seams.windows = fakeOneDrive{here: {tagCloud, attrsOnPC}, away: {tagCloud, attrsOffline}}
	left := hashBytes([]byte("written by the chat")) // the same size as the edit
	c := env.e.NewSinceCheck(1 << 20)
	if !c.Changed(here, left, -1) || !c.ItemChanged(here, left, false) {
		t.Error("a OneDrive file edited since counts as unchanged")
	}
	if c.Changed(here, hashBytes([]byte("edited by the person")), -1) {
		t.Error("a OneDrive file as the change left it counts as changed")
	}
	if c.Changed(away, left, -1) {
		t.Error("a OneDrive file not on this PC was read")
	}
	if !c.Changed(away, left, 3) {
		t.Error("a OneDrive file not on this PC of another size than the change left counts as unchanged")
	}
}
