package proc

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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
