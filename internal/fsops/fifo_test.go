//go:build !windows

package fsops

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// returnsSoon runs f and fails the test if it has not returned within a
// generous bound: a FIFO opened for reading with no writer holds open(2)
// forever, so a regression hangs rather than slows.
func returnsSoon(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return: blocked opening a FIFO", what)
	}
}

// TestFIFOUnderTheRootNeverBlocks: a FIFO (no writer) where a file is
// expected is refused by fs.read and fs.write, described by fs.stat, and
// never holds the call in open(2).
func TestFIFOUnderTheRootNeverBlocks(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p := env.path("pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	returnsSoon(t, "fs.read of a FIFO", func() {
		var ie *InputError
		if _, err := env.e.Read(ctx, ReadInput{Path: p}); !errors.As(err, &ie) || ie.Field != "path" || !strings.Contains(ie.Message, "not a file") {
			t.Errorf("fs.read of a FIFO: %v, want a path error saying it is not a file", err)
		}
	})
	returnsSoon(t, "fs.write over a FIFO", func() {
		if _, err := env.e.Write(ctx, "r:t", WriteInput{Path: p, Data: "x"}); err == nil {
			t.Error("fs.write replaced a FIFO")
		}
	})
	returnsSoon(t, "fs.stat of a FIFO", func() {
		st, err := env.e.Stat(ctx, StatInput{Path: p})
		if err != nil || st.Type != TypeOther || st.SHA256 != "" {
			t.Errorf("fs.stat of a FIFO: %+v %v", st, err)
		}
	})
}

// TestStatOfAFileSwappedForAFIFO: while a regular file and a FIFO are
// renamed in turn onto one path, every stat (quick or not) returns: one
// that saw a file and then opened the FIFO reports what it opened,
// unhashed.
func TestStatOfAFileSwappedForAFIFO(t *testing.T) {
	env := newTestEngine(t)
	ctx := context.Background()
	p, file, fifo := env.path("target"), env.path("file.tmp"), env.path("fifo.tmp")
	stop := make(chan struct{})
	swapped := make(chan error, 1)
	go func() {
		defer close(swapped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var err error
			if i%2 == 0 {
				err = os.WriteFile(file, []byte("abc"), 0o600)
				if err == nil {
					err = os.Rename(file, p)
				}
			} else {
				err = syscall.Mkfifo(fifo, 0o600)
				if err == nil {
					err = os.Rename(fifo, p)
				}
			}
			if err != nil {
				swapped <- err
				return
			}
		}
	}()
	returnsSoon(t, "stats of a path swapped between a file and a FIFO", func() {
		for i := 0; i < 2000; i++ {
			st, err := env.e.Stat(ctx, StatInput{Path: p})
			if err == nil && st.Exists && st.Type != TypeFile && st.SHA256 != "" {
				t.Errorf("a %s was reported with a hash: %+v", st.Type, st)
			}
			// A swap mid-call may make it refuse; only a hang fails.
			_, _, _ = env.e.QuickStat(ctx, StatInput{Path: p})
		}
	})
	close(stop)
	if err := <-swapped; err != nil {
		t.Fatal(err)
	}
}
