package fsops

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
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
		// Walk the committed receipts of the file in order: each starts
		// where the previous ended, and the last ends at the content.
		rows, err := db.R.Query(`SELECT id, state, pre_sha256, post_sha256 FROM fs_receipts
			WHERE path = ? ORDER BY rowid`, p)
		if err != nil {
			t.Fatal(err)
		}
		var last sql.NullString
		n := 0
		for rows.Next() {
			var id, state string
			var pre, post sql.NullString
			if err := rows.Scan(&id, &state, &pre, &post); err != nil {
				t.Fatal(err)
			}
			switch state {
			case "pending":
				t.Fatalf("receipt %s still pending after Recover", id)
			case "void":
				continue
			}
			if n > 0 && pre != last {
				t.Fatalf("receipt %s starts at %v, but the previous ended at %v", id, pre.String, last.String)
			}
			last = post
			n++
		}
		rows.Close()
		if want := hashBytes(got); n == 0 || last.String != want {
			t.Fatalf("%s: %d committed receipts, the last ends at %q, the file is %q", p, n, last.String, want)
		}
	}
	if names := tempNames(t, filepath.Join(dir, "root")); len(names) != 0 {
		t.Fatalf("temporary files left after Recover: %v", names)
	}
	spills, _ := os.ReadDir(e.SpillDir)
	for _, s := range spills {
		var n int
		if err := db.R.QueryRow(`SELECT COUNT(*) FROM fs_receipts WHERE prior_file = ? AND state = 'committed'`, s.Name()).Scan(&n); err != nil || n != 1 {
			t.Fatalf("spill file %s is referenced by %d committed receipts (%v)", s.Name(), n, err)
		}
	}
	var missing int
	rows, err := db.R.Query(`SELECT prior_file FROM fs_receipts WHERE prior_file IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var f string
		if err := rows.Scan(&f); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(e.SpillDir, f)); err != nil {
			missing++
		}
	}
	rows.Close()
	if missing > 0 {
		t.Fatalf("%d receipts refer to missing spill files", missing)
	}
}
