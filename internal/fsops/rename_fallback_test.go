//go:build !windows

package fsops

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// The rename of a file system that cannot be told "never replace" (the
// fallback renameNoReplace takes on NFS, CIFS, FUSE) never replaces a
// file or a folder either, and still renames into a free name.
func TestRenameClaimedNeverReplaces(t *testing.T) {
	env := newTestEngine(t)
	writeFile(t, env.path("a.txt"), "a")
	writeFile(t, env.path("b.txt"), "b")
	if err := renameClaimed(env.path("a.txt"), env.path("b.txt")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("file onto a file: err %v, want fs.ErrExist", err)
	}
	if mustRead(t, env.path("a.txt")) != "a" || mustRead(t, env.path("b.txt")) != "b" {
		t.Fatal("a file was replaced")
	}
	writeFile(t, env.path("d", "in.txt"), "d")
	writeFile(t, env.path("e", "in.txt"), "e")
	if err := os.MkdirAll(env.path("empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"e", "empty", "b.txt"} {
		if err := renameClaimed(env.path("d"), env.path(to)); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("folder onto %s: err %v, want fs.ErrExist", to, err)
		}
	}
	if mustRead(t, env.path("e", "in.txt")) != "e" || !exists(env.path("empty")) || mustRead(t, env.path("d", "in.txt")) != "d" {
		t.Fatal("a folder was replaced")
	}
	if err := renameClaimed(env.path("a.txt"), env.path("c.txt")); err != nil || mustRead(t, env.path("c.txt")) != "a" || exists(env.path("a.txt")) {
		t.Fatalf("file to a free name: %v", err)
	}
	if err := renameClaimed(env.path("d"), env.path("f")); err != nil || mustRead(t, env.path("f", "in.txt")) != "d" || exists(env.path("d")) {
		t.Fatalf("folder to a free name: %v", err)
	}
}

// Renames of several files racing for one free name, through the rename
// that claims the name first: exactly one wins, the name holds the
// winner's file, and every other file is still at its own place. A look
// before a plain rename (what this replaced) lets two renames both find
// the name free, and the second replaces the first's file: lost.
func TestRenameClaimedRaceHasOneWinner(t *testing.T) {
	env := newTestEngine(t)
	const racers = 8
	for round := range 150 {
		dir := env.path(strconv.Itoa(round))
		to := filepath.Join(dir, "report.pdf")
		srcs := make([]string, racers)
		for i := range srcs {
			srcs[i] = filepath.Join(dir, "copy"+strconv.Itoa(i)+".pdf")
			writeFile(t, srcs[i], "version "+strconv.Itoa(i))
		}
		start := make(chan struct{})
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range srcs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = renameClaimed(srcs[i], to)
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: both %s and %s were renamed to %s: one replaced the other", round, srcs[winner], srcs[i], to)
			case err == nil:
				winner = i
			case !errors.Is(err, fs.ErrExist):
				t.Fatalf("round %d: %s: %v", round, srcs[i], err)
			default:
				if got := mustRead(t, srcs[i]); got != "version "+strconv.Itoa(i) {
					t.Fatalf("round %d: the loser %s now holds %q", round, srcs[i], got)
				}
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no rename won", round)
		}
		if got := mustRead(t, to); got != "version "+strconv.Itoa(winner) || exists(srcs[winner]) {
			t.Fatalf("round %d: %s holds %q, want the winner's (copy%d)", round, to, got, winner)
		}
	}
}
