//go:build !windows

package fsops

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/store"
)

// The crash contract of a move across volumes: a child process (this test
// binary, re-executed) moves a folder from a tmpfs (/dev/shm) to the disk
// and is killed with SIGKILL at a point of the move (while it copies, once
// the copy is in place, while the source goes to the bin, or at a chosen
// delay). The next start's recovery must leave either the old state (the
// folder at its source, nothing at the destination, the receipt void) or
// the new one (the folder at the destination, the source gone to the bin,
// the receipt committed), and no file may be lost.

const (
	moveCrashEnv = "HEARTH_FSOPS_MOVE_CRASH"
	// moveDieEnv tells the child to kill itself once it has put that many
	// items of the source in the bin.
	moveDieEnv = "HEARTH_FSOPS_MOVE_DIE_AFTER"
	crashItems = 120
)

func moveCrashEngine(t testing.TB, disk, shm string) (*Engine, *store.DB) {
	t.Helper()
	data := filepath.Join(disk, "data")
	db, err := store.Open(context.Background(), filepath.Join(data, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	roots, err := NewRoots([]string{filepath.Join(disk, "root"), shm}, []string{data})
	if err != nil {
		t.Fatal(err)
	}
	return &Engine{DB: db, Roots: roots, SpillDir: filepath.Join(data, "fs-undo")}, db
}

// recovered is an engine on the folders of a crash run (disk and shm),
// after the recovery a start makes; its database closes with the test.
func recovered(t testing.TB, disk, shm string) (*Engine, *store.DB) {
	t.Helper()
	e, db := moveCrashEngine(t, disk, shm)
	t.Cleanup(func() { db.Close() })
	if _, err := e.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e, db
}

// crashChild is the start of a crash test's child process (this test
// binary, re-executed with env naming the run's folders): the engine on
// them, recovered. Outside a child it skips: the test is parent's helper.
func crashChild(t *testing.T, env, parent string) (e *Engine, disk, shm string) {
	t.Helper()
	spec := os.Getenv(env)
	if spec == "" {
		t.Skip("helper process for " + parent)
	}
	disk, shm, _ = strings.Cut(spec, "|")
	e, _ = recovered(t, disk, shm)
	return e, disk, shm
}

// crashRun is one child of a crash test, killed somewhere in its move:
// its folders (shm on a tmpfs, base on the disk with the root and the
// data) and the child process.
type crashRun struct {
	t         *testing.T
	base, shm string
	cmd       *exec.Cmd
	// exited receives the child's end once.
	exited chan error
}

// newCrashRun makes the folders of a run named name under disk, with a
// bin of its own.
func newCrashRun(t *testing.T, disk, name string) *crashRun {
	t.Helper()
	shm, err := os.MkdirTemp("/dev/shm", "hearth-crash-")
	if err != nil {
		t.Skip("cannot write /dev/shm: only one volume here")
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	t.Setenv("XDG_DATA_HOME", filepath.Join(disk, "xdg"+name))
	base := filepath.Join(disk, name)
	for _, dir := range []string{"root", "data"} {
		if err := os.MkdirAll(filepath.Join(base, dir), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return &crashRun{t: t, base: base, shm: shm}
}

// start starts the child, which runs the test child (its crashChild reads
// env).
func (r *crashRun) start(child, env string) {
	r.t.Helper()
	r.cmd = exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.count=1")
	r.cmd.Env = append(os.Environ(), env+"="+r.base+"|"+r.shm)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.exited = make(chan error, 1)
	go func() { r.exited <- r.cmd.Wait() }()
}

// kill kills the child with SIGKILL and waits for its end.
func (r *crashRun) kill() {
	r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.exited
}

// TestMoveCrashChild is the child process of TestMoveAcrossVolumesSurvivesKill.
func TestMoveCrashChild(t *testing.T) {
	e, disk, shm := crashChild(t, moveCrashEnv, "TestMoveAcrossVolumesSurvivesKill")
	if after, _ := strconv.Atoi(os.Getenv(moveDieEnv)); after > 0 {
		e.seams.disposed = func(n int) {
			if n == after {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal ends the process
			}
		}
	}
	res, err := e.FileOp(context.Background(), "r:crash", ActionMove, FileOpInput{FileOpItem: FileOpItem{
		From: filepath.Join(shm, "Photos"), To: filepath.Join(disk, "root", "Archive", "Photos")}})
	if err != nil || res.Status != "completed" || !res.Items[0].CrossVolume {
		t.Fatalf("move: %+v %v", res, err)
	}
}

func devOf(t *testing.T, p string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return uint64(st.Dev)
}

// crashDisk is the disk side of a crash test, which kills child
// processes (not with -short) and needs /dev/shm on a volume of its own:
// what it kills is a move across volumes.
func crashDisk(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("kills child processes")
	}
	disk, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/dev/shm"); err != nil || devOf(t, "/dev/shm") == devOf(t, disk) {
		t.Skip("no /dev/shm on a volume of its own: only one volume here, the crash of a move across volumes cannot be tested")
	}
	return disk
}

func TestMoveAcrossVolumesSurvivesKill(t *testing.T) {
	disk := crashDisk(t)
	// When the parent kills the child: a condition on the disk it polls.
	points := []struct {
		name string
		now  func(shm, dst string) bool
	}{
		{"while copying", func(shm, dst string) bool {
			ms, _ := filepath.Glob(filepath.Join(filepath.Dir(dst), ".hearth-tmp-*", "*", "*"))
			return len(ms) > 0
		}},
		{"copy in place", func(shm, dst string) bool { return exists(dst) }},
		{"source in the bin", func(shm, dst string) bool { return exists(dst) && !exists(filepath.Join(shm, "Photos")) }},
		// The child kills itself halfway through the source's way to the
		// bin: the next start puts the rest in the same item of the bin.
		{"half the source in the bin", nil},
		{"after 5ms", nil}, {"after 20ms", nil}, {"after 60ms", nil},
	}
	for i, pt := range points {
		t.Run(pt.name, func(t *testing.T) {
			run := newCrashRun(t, disk, fmt.Sprint(i))
			if pt.name == "half the source in the bin" {
				t.Setenv(moveDieEnv, fmt.Sprint(crashItems/2))
			}
			shm := run.shm
			src, dst := filepath.Join(shm, "Photos"), filepath.Join(run.base, "root", "Archive", "Photos")
			want := map[string]string{}
			for k := 0; k < crashItems; k++ {
				rel := filepath.Join(fmt.Sprint("album", k%4), fmt.Sprintf("img%03d.jpg", k))
				content := strings.Repeat(fmt.Sprintf("photo %d ", k), 12000)
				writeFile(t, filepath.Join(src, rel), content)
				want[rel] = hashBytes([]byte(content))
			}
			run.start("TestMoveCrashChild", moveCrashEnv)
			var delay time.Duration
			fmt.Sscanf(pt.name, "after %dms", &delay)
			deadline := time.Now().Add(30 * time.Second)
			killed := false
		poll:
			for time.Now().Before(deadline) {
				select {
				case <-run.exited:
					break poll
				default:
				}
				if pt.now != nil && pt.now(shm, dst) || pt.now == nil && delay > 0 && time.Since(deadline.Add(-30*time.Second)) > delay*time.Millisecond {
					run.kill()
					killed = true
					break
				}
				time.Sleep(200 * time.Microsecond)
			}
			t.Logf("killed: %v; source there: %v, destination there: %v", killed, exists(src), exists(dst))

			_, db := recovered(t, run.base, shm)
			var state string
			err := db.R.QueryRow(`SELECT state FROM fs_receipts WHERE action = 'move'`).Scan(&state)
			if err != nil && killed && !exists(dst) {
				state = "none" // killed before the receipt was written
			} else if err != nil {
				t.Fatal(err)
			}
			check := func(dir string) {
				for rel, sha := range want {
					got, ok, err := fileHash(filepath.Join(dir, rel))
					if err != nil || !ok || got != sha {
						t.Fatalf("%s: %s lost or torn (state %s)", dir, rel, state)
					}
				}
			}
			switch state {
			case "committed":
				check(dst)
				if exists(src) {
					t.Fatal("committed, but the source is still in its place")
				}
				var bin string
				db.R.QueryRow(`SELECT COALESCE(bin_path, '') FROM fs_receipts WHERE action = 'move'`).Scan(&bin)
				if bin != "" {
					check(bin)
				}
			case "void", "none":
				check(src)
				if exists(dst) {
					t.Fatal("void, but something is at the destination")
				}
			default:
				t.Fatalf("receipt %s after recovery", state)
			}
			if ms, _ := filepath.Glob(filepath.Join(filepath.Dir(dst), ".hearth-tmp-*")); len(ms) > 0 {
				t.Fatalf("temporary copies left: %v", ms)
			}
			t.Logf("state %s", state)
		})
	}
}

// moveTree across real volumes (a tmpfs and the disk) with nothing
// written meanwhile: the item is at its destination, whole, and gone
// from its source.
func TestMoveTreeAcrossVolumes(t *testing.T) {
	disk := t.TempDir()
	shm, err := os.MkdirTemp("/dev/shm", "hearth-tree-")
	if err != nil {
		t.Skip("cannot write /dev/shm: only one volume here")
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	if devOf(t, shm) == devOf(t, disk) {
		t.Skip("/dev/shm is on the same volume as the temporary folder")
	}
	src, dst := filepath.Join(shm, "Photos"), filepath.Join(disk, "Photos")
	writeFile(t, filepath.Join(src, "a.jpg"), "a")
	writeFile(t, filepath.Join(src, "album", "b.jpg"), "b")
	if err := moveTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if exists(src) || mustRead(t, filepath.Join(dst, "a.jpg")) != "a" || mustRead(t, filepath.Join(dst, "album", "b.jpg")) != "b" {
		t.Fatalf("source there %v; destination not whole", exists(src))
	}
	// A link moves itself, still pointing where it pointed.
	link := filepath.Join(shm, "latest")
	if err := os.Symlink(filepath.Join(dst, "a.jpg"), link); err != nil {
		t.Fatal(err)
	}
	if err := moveTree(link, filepath.Join(disk, "latest")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(filepath.Join(disk, "latest")); err != nil || got != filepath.Join(dst, "a.jpg") {
		t.Fatalf("the moved link points to %q (%v)", got, err)
	}
	if _, err := os.Lstat(link); err == nil || mustRead(t, filepath.Join(dst, "a.jpg")) != "a" {
		t.Fatal("the link is still at its source, or its target changed")
	}
}

// The crash contract of an overwrite: a move replacing a file (here
// across volumes, so the replaced file is away while the new one is
// copied) is killed with SIGKILL right after each of its receipt's
// writes. The parent holds the database's write lock once it sees the
// k-th commit since the pending receipt (several writes the child makes
// in quick succession may count as one), so the child runs on until its
// next write and waits there; the parent waits for the destination to
// be gone if it goes, then kills it. Before the receipt recorded where
// the replaced file goes, the child put it in the bin and then waited
// to record it: killed there, nothing said where the file was. After recovery the replaced file is
// at the destination (the receipt void) or in the bin where the receipt
// says (committed), never lost.

const overwriteCrashEnv = "HEARTH_FSOPS_OVERWRITE_CRASH"

// TestOverwriteCrashChild is the child process of TestOverwriteSurvivesKill.
func TestOverwriteCrashChild(t *testing.T) {
	e, disk, shm := crashChild(t, overwriteCrashEnv, "TestOverwriteSurvivesKill")
	res, err := e.FileOp(context.Background(), "r:crash", ActionMove, FileOpInput{FileOpItem: FileOpItem{
		From: filepath.Join(shm, "report.pdf"), To: filepath.Join(disk, "root", "report.pdf"), Overwrite: true}})
	if err != nil || res.Status != "completed" {
		t.Fatalf("move: %+v %v", res, err)
	}
}

func TestOverwriteSurvivesKill(t *testing.T) {
	disk := crashDisk(t) // on one volume the replaced file is never away long enough
	for gate := range 4 {
		t.Run(fmt.Sprint("after commit ", gate+1), func(t *testing.T) {
			run := newCrashRun(t, disk, fmt.Sprint(gate))
			base, shm := run.base, run.shm
			src, dst := filepath.Join(shm, "report.pdf"), filepath.Join(base, "root", "report.pdf")
			oldBody, newBody := "%PDF-1.4 the old report", "%PDF-1.7 "+strings.Repeat("the new report ", 2<<20)
			writeFile(t, dst, oldBody)
			writeFile(t, src, newBody)
			oldSHA, newSHA := hashBytes([]byte(oldBody)), hashBytes([]byte(newBody))
			_, db := moveCrashEngine(t, base, shm) // made and migrated before the child
			db.Close()

			// The lock: a connection of its own that never waits.
			raw, err := sql.Open("sqlite", "file:"+filepath.Join(base, "data", "hearth.db")+"?_pragma=busy_timeout(0)")
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			ctx := context.Background()
			conn, err := raw.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			version := func() (v int64) {
				if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
					t.Fatal(err)
				}
				return v
			}

			run.start("TestOverwriteCrashChild", overwriteCrashEnv)
			deadline := time.Now().Add(60 * time.Second)
			gone := func() bool {
				select {
				case err := <-run.exited:
					run.exited <- err
					return true
				default:
					return time.Now().After(deadline)
				}
			}
			// lock takes the write lock as soon as the child's write in
			// progress commits; it reports false when the child ended.
			lock := func() bool {
				for !gone() {
					if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err == nil {
						return true
					}
				}
				return false
			}
			// next lets the child make its next write, then locks again.
			next := func() bool {
				v := version()
				conn.ExecContext(ctx, "ROLLBACK")
				for version() == v {
					if gone() {
						return false
					}
				}
				return lock()
			}
			held, writes := false, -1
			if lock() {
				held = true
				for held && writes < gate {
					held = next()
					var n int
					conn.QueryRowContext(ctx, `SELECT count(*) FROM fs_receipts WHERE action = 'move'`).Scan(&n)
					if n > 0 {
						writes++
					}
				}
			}
			killed := false
			if held {
				// The child runs on to its next write: wait for the
				// destination to go, if it goes before it.
				for until := time.Now().Add(time.Second); time.Now().Before(until) && exists(dst); {
					time.Sleep(100 * time.Microsecond)
				}
				run.kill()
				killed = true
				conn.ExecContext(ctx, "ROLLBACK")
			}
			t.Logf("killed: %v after commit %d; destination there: %v", killed, writes+1, exists(dst))

			_, db = recovered(t, base, shm)
			var state, replaced string
			if err := db.R.QueryRow(`SELECT state, COALESCE(replaced_bin, '') FROM fs_receipts WHERE action = 'move'`).Scan(&state, &replaced); err != nil {
				t.Fatal(err)
			}
			has := func(p, sha string) bool {
				got, ok, err := fileHash(p)
				return err == nil && ok && got == sha
			}
			switch state {
			case "committed":
				if !has(dst, newSHA) || exists(src) {
					t.Fatal("committed, but the new file is not in place, or still at its source")
				}
				if !has(replaced, oldSHA) {
					t.Fatalf("committed, but the replaced file is not in the bin where the receipt says (%q)", replaced)
				}
			case "void":
				if !has(dst, oldSHA) {
					t.Fatal("void, but the replaced file is not back at its place: lost to the bin")
				}
				if !has(src, newSHA) {
					t.Fatal("void, but the new file is not at its source")
				}
			default:
				t.Fatalf("receipt %s after recovery", state)
			}
			t.Logf("state %s", state)
		})
	}
}

// fs.move across volumes (the disk to a tmpfs) puts in the bin only what
// it copied and verified: a file changed at the source after the verify
// stays there, named in the answer, and the bin never holds a version
// the destination lacks. The test runs carryDo's phases itself, as it
// runs them, with the edit between the verify and the source's removal.
func TestMoveAcrossVolumesBinsOnlyWhatItCopied(t *testing.T) {
	env := newTestEngine(t)
	t.Setenv("XDG_DATA_HOME", filepath.Join(env.root, ".local", "share")) // the bin on the source's volume
	shm, err := os.MkdirTemp("/dev/shm", "hearth-move-")
	if err != nil {
		t.Skip("cannot write /dev/shm: only one volume here")
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	if devOf(t, shm) == devOf(t, env.root) {
		t.Skip("/dev/shm is on the same volume as the temporary folder")
	}
	src, dst := env.path("Photos"), filepath.Join(shm, "Photos")
	writeFile(t, filepath.Join(src, "a.jpg"), "a")
	writeFile(t, filepath.Join(src, "album", "b.jpg"), "b")
	if err := renameNoReplace(src, dst); !crossVolume(err) {
		t.Fatalf("the rename across volumes: %v", err)
	}
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	copied, err := verifyTree(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	// Another program, after the verify: a changed file, a new one.
	writeFile(t, filepath.Join(src, "a.jpg"), "a, edited")
	writeFile(t, filepath.Join(src, "album", "new.jpg"), "new")

	where, kept, err := env.e.binSource(src, copied, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(src, "a.jpg")); got != "a, edited" {
		t.Fatalf("the file changed after the verify is not at the source: %q", got)
	}
	if got := mustRead(t, filepath.Join(src, "album", "new.jpg")); got != "new" {
		t.Fatalf("the file written after the verify is not at the source: %q", got)
	}
	if exists(filepath.Join(src, "album", "b.jpg")) {
		t.Fatal("b.jpg, copied and unchanged, is still at the source")
	}
	if where == "" || mustRead(t, filepath.Join(where, "album", "b.jpg")) != "b" {
		t.Fatalf("b.jpg is not in the bin at %q", where)
	}
	if exists(filepath.Join(where, "a.jpg")) || exists(filepath.Join(where, "album", "new.jpg")) {
		t.Fatal("the bin holds what changed or appeared after the verify")
	}
	slices.Sort(kept)
	if want := []string{filepath.Join(src, "a.jpg"), filepath.Join(src, "album", "new.jpg")}; !slices.Equal(kept, want) {
		t.Fatalf("kept %v, want %v", kept, want)
	}
	if mustRead(t, filepath.Join(dst, "a.jpg")) != "a" {
		t.Fatal("the destination lost the verified copy")
	}
}
