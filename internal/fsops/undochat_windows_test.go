package fsops

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/atomicfile"
)

// TestUndoChatFileHeldOpen: on Windows (run under Wine by
// scripts/test-windows), the operator's Undo all of a chat whose file
// another program holds open without FILE_SHARE_DELETE retries the
// replace, then reports that file as left alone, untouched, naming the
// holder as the reason and the attempts made, while the other file is put
// back and the file the chat created goes to the Recycle Bin. Once the
// holder lets go, Undo all puts the held file back too.
func TestUndoChatFileHeldOpen(t *testing.T) {
	env := newTestEngine(t)
	env.e.Replacer = atomicfile.Replacer{MaxAttempts: 4, BaseDelay: time.Millisecond, Remove: MoveToTrash}
	ctx := context.Background()
	held, free, created := env.path("held.txt"), env.path("free.txt"), env.path("new.txt")
	for _, p := range []string{held, free} {
		if err := os.WriteFile(p, []byte("before\r\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := env.e.Write(ctx, "r:chat", WriteInput{Path: p, Data: "chat's\r\n"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.e.Write(ctx, "r:chat", WriteInput{Path: created, Data: "new\r\n"}); err != nil {
		t.Fatal(err)
	}

	h := openWithoutShareDelete(t, held)
	rep, err := env.e.UndoChat(ctx, "Ann", "r:chat")
	windows.CloseHandle(h)
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]FileOutcome{}
	for _, f := range rep.Files {
		byPath[f.Path] = f
	}
	if f := byPath[held]; f.Outcome == OutcomeRestored {
		t.Skip("this Windows (or Wine) let the rename replace a file held open without FILE_SHARE_DELETE")
	}
	f := byPath[held]
	if f.Outcome != OutcomeFailed || f.Attempts != 4 || !strings.Contains(f.Why, "another program kept it open") {
		t.Fatalf("the held file's outcome: %+v", f)
	}
	if b, _ := os.ReadFile(held); string(b) != "chat's\r\n" {
		t.Fatalf("the held file was touched: %q", b)
	}
	if byPath[free].Outcome != OutcomeRestored || byPath[created].Outcome != OutcomeTrashed {
		t.Fatalf("the other files: %+v", rep.Files)
	}
	if b, _ := os.ReadFile(free); string(b) != "before\r\n" {
		t.Fatalf("free.txt holds %q", b)
	}
	if _, err := os.Stat(created); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the created file is still there: %v", err)
	}

	again, err := env.e.UndoChat(ctx, "Ann", "r:chat")
	if err != nil {
		t.Fatal(err)
	}
	if again.Count(OutcomeRestored) != 1 || again.Count(OutcomeUnchanged) != 2 {
		t.Fatalf("after the holder let go: %+v", again.Files)
	}
	if b, _ := os.ReadFile(held); string(b) != "before\r\n" {
		t.Fatalf("held.txt holds %q", b)
	}
}

// TestMoveToTrashHeldOpen: a file held open cannot go to the Recycle Bin;
// MoveToTrash says so as a sharing violation (which Replacer retries) and
// leaves it in place.
func TestMoveToTrashHeldOpen(t *testing.T) {
	env := newTestEngine(t)
	p := env.path("busy.txt")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := openWithoutShareDelete(t, p)
	err := MoveToTrash(p)
	windows.CloseHandle(h)
	if err == nil {
		if _, serr := os.Stat(p); errors.Is(serr, fs.ErrNotExist) {
			t.Skip("this Windows (or Wine) moved a file held open without FILE_SHARE_DELETE")
		}
		t.Fatal("MoveToTrash said nothing, and the file is still there")
	}
	if !atomicfile.IsTransient(err) {
		t.Fatalf("not reported as held: %v", err)
	}
	if _, serr := os.Stat(p); serr != nil {
		t.Fatalf("the held file is gone: %v", serr)
	}
	if err := MoveToTrash(p); err != nil {
		t.Fatalf("once let go: %v", err)
	}
	if _, serr := os.Stat(p); !errors.Is(serr, fs.ErrNotExist) {
		t.Fatalf("still there after the move to the Recycle Bin: %v", serr)
	}
}
