package proc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// parentOf reads the parent pid of pid from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Fatalf("read the stat of %d: %v", pid, err)
	}
	// pid (comm) state ppid ...: comm may hold spaces, so cut at its ')'.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatalf("stat of %d: %q", pid, b)
	}
	return ppid
}

// TestChildDiesWithKilledParent: a process that started a child through
// Run (as Hearth does for exec and jobs) is SIGKILLed — no cleanup of its
// own can run — and the child dies with it.
func TestChildDiesWithKilledParent(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	parent := exec.Command(os.Args[0], pidfile)
	parent.Env = append(os.Environ(), helperEnv+"=run-pidsleep", "GORACE=atexit_sleep_ms=0")
	parent.Stderr = os.Stderr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	child := waitPID(t, pidfile)
	t.Cleanup(func() { _ = Kill(child, false) })
	if pp := parentOf(t, child); pp != parent.Process.Pid {
		t.Fatalf("the child's parent is %d, not the helper %d", pp, parent.Process.Pid)
	}
	if !alive(child) {
		t.Fatal("the child died before its parent did")
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	assertGone(t, child)
}

// TestChildOutlivesSpawningThread: the parent-death signal follows the
// thread that forked the child, so a child started from a goroutine whose
// thread then exits (a goroutine that ends while locked to its thread)
// must not die with that thread. Tree.Start shares Run's start path.
func TestChildOutlivesSpawningThread(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(os.Args[0], pidfile)
	cmd.Env = append(os.Environ(), helperEnv+"=pidsleep", "GORACE=atexit_sleep_ms=0")
	tree, err := NewTree()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = tree.SysProcAttr()
	exited := make(chan int, 1)
	var startErr error
	onExitingThread(t, func(tid int) {
		startErr = tree.Start(cmd)
		exited <- tid
	})
	if startErr != nil {
		t.Fatalf("start: %v", startErr)
	}
	tid := <-exited
	t.Cleanup(func() { _ = tree.Kill(); _ = cmd.Wait(); tree.Close() })
	if cmd.SysProcAttr.Pdeathsig == 0 {
		t.Fatal("Tree.Start did not set a parent-death signal")
	}
	pid := cmd.Process.Pid
	// Wait for the thread to be gone, then give a signal its exit would
	// cause time to land.
	task := filepath.Join("/proc/self/task", strconv.Itoa(tid))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d did not exit", tid)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if !alive(pid) {
		t.Fatalf("the child %d died when the thread that started it exited", pid)
	}
	if got := waitPID(t, pidfile); got != pid {
		t.Fatalf("the child recorded pid %d, not %d", got, pid)
	}
}

// onExitingThread runs fn on a goroutine locked to an OS thread that Go
// ends when fn returns (the goroutine exits still locked), and waits for
// fn. The main thread is never ended (Go parks it instead), so a goroutine
// that lands there stays, locked and blocked until the test ends, and the
// next one is sure to get another thread.
func onExitingThread(t *testing.T, fn func(tid int)) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	for range 3 {
		done := make(chan bool)
		go func() {
			runtime.LockOSThread()
			tid := syscall.Gettid()
			if tid == syscall.Getpid() {
				done <- false
				<-release
				runtime.UnlockOSThread()
				return
			}
			fn(tid)
			done <- true
		}()
		if <-done {
			return
		}
	}
	t.Fatal("no goroutine got a thread other than the main one")
}

// helperCmd is a child running the test binary in helper mode.
func helperCmd(mode string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// spawnAt is startCmd with the stage seam set to stage.
func spawnAt(ctx context.Context, cmd *exec.Cmd, stage func(stage string)) error {
	return spawn(&spawnReq{ctx: ctx, cmd: cmd, seams: seams{stage: stage}})
}

// busy holds n spawner threads inside a start, standing in for an exec
// stuck on a hung mount: each start blocks in its stage seam on the spawner
// thread until release is called, then starts a child that exits at once.
// It returns when all n spawners are held.
func busy(t *testing.T, n int) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	held := make(chan struct{}, n)
	errs := make(chan error, n)
	for range n {
		cmd := helperCmd("exit", "0")
		go func() {
			err := spawnAt(context.Background(), cmd, func(stage string) {
				if stage == "before" {
					held <- struct{}{}
					<-gate
				}
			})
			if err == nil {
				err = cmd.Wait()
			}
			errs <- err
		}()
	}
	for range n {
		select {
		case <-held:
		case <-time.After(10 * time.Second):
			t.Fatal("the spawners never took the blocking starts")
		}
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(gate)
			for range n {
				if err := <-errs; err != nil {
					t.Errorf("a blocking start: %v", err)
				}
			}
		})
	}
	t.Cleanup(release)
	return release
}

// warmSpawners makes sure the spawner threads exist, so that goroutine
// counts taken afterwards include them.
func warmSpawners(t *testing.T) {
	t.Helper()
	cmd := helperCmd("exit", "0")
	if err := startCmd(t.Context(), cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// settleGoroutines waits for the goroutine count to come back to base.
func settleGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before the test: a start left one behind", runtime.NumGoroutine(), base)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStartGivesUpWhileSpawnersBusy: with every spawner stuck in a start,
// a queued start returns its context's error as soon as that ends, and the
// abandoned request is never started later.
func TestStartGivesUpWhileSpawnersBusy(t *testing.T) {
	warmSpawners(t)
	base := runtime.NumGoroutine()
	release := busy(t, spawners)

	ctx, cancel := context.WithCancel(t.Context())
	cmd := helperCmd("sleep")
	errc := make(chan error, 1)
	go func() { errc <- startCmd(ctx, cmd) }()
	// Let the start queue up behind the busy spawners, then cancel.
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-errc:
		t.Fatalf("the start returned %v while every spawner was busy", err)
	default:
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a cancelled start stayed blocked behind the busy spawners")
	}

	release()
	// The spawners serve a new start, and the abandoned one never ran.
	warmSpawners(t)
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("the abandoned start ran anyway (pid %d)", cmd.Process.Pid)
	}
	settleGoroutines(t, base)
}

// TestRunTimeoutWhileSpawnersBusy: Spec.Timeout bounds the wait for a
// spawner too, and the error says so.
func TestRunTimeoutWhileSpawnersBusy(t *testing.T) {
	busy(t, spawners)
	s := helperSpec("exit", "0")
	s.Timeout = 200 * time.Millisecond
	start := time.Now()
	_, err := Run(t.Context(), s)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timeout of 200ms") {
		t.Fatalf("got %v, want a timeout before the start", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Run took %v to give up", d)
	}
}

// TestOneStuckStartLeavesOthersFree: a start stuck on one spawner thread
// does not hold up the next one.
func TestOneStuckStartLeavesOthersFree(t *testing.T) {
	busy(t, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := Run(ctx, helperSpec("exit", "7"))
	if err != nil {
		t.Fatalf("a start behind one stuck spawner failed: %v", err)
	}
	if res.ExitCode != 7 {
		t.Fatalf("exit %d, want 7", res.ExitCode)
	}
}

// TestCallerWaitsForItsSpawner: a caller whose ctx ends while a spawner
// holds its request does not return until the spawner is done with it
// (the spawner still reads cmd and the files handed to the child); the
// spawner then skips the start, and the caller gets ctx.Err().
func TestCallerWaitsForItsSpawner(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cmd := helperCmd("sleep")
	reached, gate, stages := make(chan struct{}), make(chan struct{}), make(chan string, 2)
	errc := make(chan error, 1)
	go func() {
		errc <- spawnAt(ctx, cmd, func(stage string) {
			if stage == "before" {
				close(reached)
				<-gate
				return
			}
			stages <- stage
		})
	}()
	<-reached
	cancel()
	select {
	case err := <-errc:
		close(gate)
		t.Fatalf("the caller returned (%v) while its spawner still held the request", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(gate)
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the caller never returned once its spawner was free")
	}
	if got := <-stages; got != "skipped" {
		t.Fatalf("the spawner went on to %q, want \"skipped\"", got)
	}
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("a start whose ctx had ended ran anyway (pid %d)", cmd.Process.Pid)
	}
}

// TestStartAbandonedDuringSpawnIsKilled: a caller that gives up while its
// start is under way waits for the start, then gets ctx.Err(), and the
// child that start produced (and what it started in its process group) is
// killed and reaped rather than left running without an owner.
func TestStartAbandonedDuringSpawnIsKilled(t *testing.T) {
	warmSpawners(t)
	base := runtime.NumGoroutine()
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := helperCmd("spawn", pidfile)
	ctx, cancel := context.WithCancel(t.Context())
	started, gate := make(chan int, 1), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- spawnAt(ctx, cmd, func(stage string) {
			if stage == "after" {
				started <- cmd.Process.Pid
				<-gate
			}
		})
	}()
	var pid int
	select {
	case pid = <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the start never completed")
	}
	// The child has recorded its own child (same process group) before
	// the caller gives up.
	grandchild := waitPID(t, pidfile)
	cancel()
	close(gate)
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled start never returned")
	}
	assertGone(t, grandchild)
	// Reaped, not a zombie: the entry is gone from /proc.
	stat := filepath.Join("/proc", strconv.Itoa(pid))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(stat); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatalf("the abandoned child %d was not killed and reaped", pid)
		}
	}
	settleGoroutines(t, base)
}
