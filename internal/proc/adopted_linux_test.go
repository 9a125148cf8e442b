package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// subreaper makes this test process the child subreaper, as Hearth is.
func subreaper(t testing.TB) {
	t.Helper()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skipf("no child subreaper here: %v", err)
	}
	if !pidfdsWork() {
		t.Skip("no pidfds here")
	}
}

// leaveSetsid starts n programs with setsid -f from a shell that exits,
// so this process adopts them, and returns their pids.
func leaveSetsid(t testing.TB, n int) []int {
	t.Helper()
	dir := t.TempDir()
	var script strings.Builder
	for i := range n {
		f := filepath.Join(dir, strconv.Itoa(i))
		script.WriteString("setsid -f sh -c 'echo $$ > " + f + ".tmp && mv " + f + ".tmp " + f + "; exec sleep 600' </dev/null >/dev/null 2>&1; ")
	}
	if out, err := exec.Command("sh", "-c", script.String()).CombinedOutput(); err != nil {
		t.Fatalf("start the setsid programs: %v %s", err, out)
	}
	pids := make([]int, n)
	for i := range n {
		f := filepath.Join(dir, strconv.Itoa(i))
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			b, err := os.ReadFile(f)
			if err == nil {
				pids[i], _ = strconv.Atoi(strings.TrimSpace(string(b)))
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("program %d never wrote its pid", i)
			}
		}
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return pids
}

// TestKillAdoptedSparesOwnChildren: KillAdopted kills the processes this
// one adopted (a setsid -f program whose parent exited), with what they
// started, and leaves the children it started itself and still waits
// for (a running call's, the tunnel client).
func TestKillAdoptedSparesOwnChildren(t *testing.T) {
	subreaper(t)
	own := exec.Command("sleep", "600")
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Process.Kill(); _ = own.Wait() })
	adopted := leaveSetsid(t, 2)
	for _, pid := range adopted {
		if pp, live := liveParent(pid); !live || pp != os.Getpid() {
			t.Fatalf("process %d was not adopted here (parent %d)", pid, pp)
		}
	}
	n, err := KillAdopted(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if n < len(adopted) {
		t.Errorf("KillAdopted killed %d processes, want at least %d", n, len(adopted))
	}
	for _, pid := range adopted {
		if alive(pid) {
			t.Errorf("adopted process %d still runs", pid)
		}
	}
	if !alive(own.Process.Pid) {
		t.Error("KillAdopted killed a child this process started and waits for")
	}
}

// TestKillAdoptedSparesWhatStartedAfter: a sweep takes only what started
// before its cutoff (the sweep's look at the e-stop's latch): a program
// adopted after it, as one a call started after the operator's reset, is
// left alone; a sweep with a later cutoff takes it.
func TestKillAdoptedSparesWhatStartedAfter(t *testing.T) {
	subreaper(t)
	cutoff := time.Now()
	// More than one boot-clock tick (10 ms): the programs start after the
	// cutoff's tick, not within it.
	time.Sleep(50 * time.Millisecond)
	later := leaveSetsid(t, 2)
	n, err := KillAdopted(cutoff)
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range later {
		if !alive(pid) {
			t.Fatalf("process %d, started after the cutoff, was killed (%d killed)", pid, n)
		}
	}
	if n, err = KillAdopted(time.Now()); err != nil {
		t.Fatal(err)
	}
	if n < len(later) {
		t.Errorf("a sweep with a later cutoff killed %d processes, want at least %d", n, len(later))
	}
	for _, pid := range later {
		if alive(pid) {
			t.Errorf("process %d still runs after a sweep with a later cutoff", pid)
		}
	}
}

// BenchmarkKillAdopted measures the e-stop's kill of 10 adopted
// processes: from the call until none of them runs.
func BenchmarkKillAdopted(b *testing.B) {
	subreaper(b)
	for b.Loop() {
		b.StopTimer()
		pids := leaveSetsid(b, 10)
		b.StartTimer()
		if _, err := KillAdopted(time.Now()); err != nil {
			b.Fatal(err)
		}
		for _, pid := range pids {
			for alive(pid) {
				time.Sleep(time.Millisecond)
			}
		}
	}
}

// TestPidfdsWorkIsWhatGoDoes: the check KillAdopted relies on says yes
// exactly when Go holds a pidfd for a child it started and has not waited
// for — the thing that tells Hearth's own children from adopted ones —
// and a child it holds is never listed as adopted.
func TestPidfdsWorkIsWhatGoDoes(t *testing.T) {
	own := exec.Command("sleep", "600")
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = own.Process.Kill(); _ = own.Wait() })
	held := PidfdHeld(own.Process.Pid, -1)
	if got := pidfdsWork(); got != held {
		t.Fatalf("pidfdsWork says %v, but Go holds a pidfd for its child: %v", got, held)
	}
	if !held {
		t.Skip("Go holds no pidfds for its children here")
	}
	adopted, err := Adopted()
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range adopted {
		if pid == own.Process.Pid {
			t.Fatal("a child this process started and waits for is listed as adopted")
		}
	}
}
