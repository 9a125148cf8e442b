package fsops

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/store"
)

// The crash test runs a stream of writes in a child process (this test
// binary, re-executed), kills it with SIGKILL (TerminateProcess on Windows)
// at an arbitrary point, restarts it a few times, and then checks that every
// file is wholly one generation, no temporary or orphan spill file is left,
// and the receipts form a consistent chain ending at each file's content.

const (
	crashDirEnv = "HEARTH_FSOPS_CRASH_DIR"
	crashGenEnv = "HEARTH_FSOPS_CRASH_GEN"
	crashFiles  = 4
)

// crashContent is generation gen of file i: large enough that some prior
// copies are spilled, and self-describing so a torn file is detectable.
func crashContent(i, gen int) []byte {
	unit := fmt.Sprintf("gen-%08d|", gen)
	return bytes.Repeat([]byte(unit), (24<<10+i*8<<10)/len(unit))
}

func crashEngine(t testing.TB, dir string) (*Engine, *store.DB) {
	t.Helper()
	root := filepath.Join(dir, "root")
	data := filepath.Join(dir, "data")
	db, err := store.Open(context.Background(), filepath.Join(data, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	roots, err := NewRoots([]string{root}, []string{data})
	if err != nil {
		t.Fatal(err)
	}
	return &Engine{DB: db, Roots: roots, SpillDir: filepath.Join(data, "fs-undo"), InlinePriorMax: 16 << 10}, db
}

// TestCrashChild is the child process of TestCrashMidWrites.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("helper process for TestCrashMidWrites")
	}
	start, _ := strconv.Atoi(os.Getenv(crashGenEnv))
	e, db := crashEngine(t, dir)
	defer db.Close()
	ctx := context.Background()
	if _, err := e.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewWriter(os.Stdout)
	for gen := start; ; gen++ {
		for i := range crashFiles {
			p := filepath.Join(dir, "root", fmt.Sprintf("f%d.txt", i))
			if _, err := e.Write(ctx, "crash", WriteInput{Path: p, Data: string(crashContent(i, gen))}); err != nil {
				t.Fatal(err)
			}
			if gen%3 == 0 && i == 0 {
				r, err := e.Write(ctx, "crash", WriteInput{Path: p, Data: "tmp"})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := e.Undo(ctx, "crash", UndoInput{ReceiptID: r.ReceiptID}); err != nil {
					t.Fatal(err)
				}
			}
		}
		fmt.Fprintf(out, "gen %d\n", gen)
		out.Flush()
	}
}

func TestCrashMidWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"root", "data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for round, delay := range []time.Duration{0, 3 * time.Millisecond, 7 * time.Millisecond, 11 * time.Millisecond} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashGenEnv+"="+strconv.Itoa(round*1000000+1))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		n := 0
		for n < 3 && sc.Scan() {
			if strings.HasPrefix(sc.Text(), "gen ") {
				n++
			}
		}
		if n < 3 {
			cmd.Wait()
			t.Fatalf("round %d: the child stopped after %d generations", round, n)
		}
		time.Sleep(delay)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
	}

	e, db := crashEngine(t, dir)
	defer db.Close()
	ctx := context.Background()
	rep, err := e.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("recovery after the last kill: %+v", rep)

	var paths []string
	for i := range crashFiles {
		p := filepath.Join(dir, "root", fmt.Sprintf("f%d.txt", i))
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "tmp" {
			gen, err := strconv.Atoi(strings.TrimPrefix(string(got[:12]), "gen-"))
			if err != nil || !bytes.Equal(got, crashContent(i, gen)) {
				t.Fatalf("%s is torn: %d bytes starting %q", p, len(got), got[:min(len(got), 40)])
			}
		}
		paths = append(paths, p)
	}
	if spilled := CheckReceiptChain(t, db, e.SpillDir, paths); spilled == 0 {
		t.Fatal("no prior copy was spilled; the test no longer exercises spill files")
	}
	if names := tempNames(t, filepath.Join(dir, "root")); len(names) != 0 {
		t.Fatalf("temporary files left after Recover: %v", names)
	}
}
