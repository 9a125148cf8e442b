package app_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/peeruser"
)

// leaveScript starts three programs that leave the process tree of the
// shell running it — one started with setsid -f (a session of its own,
// outside the shell's group), one double-forked, one under nohup in the
// background — each writing its pid into dir (the files tag1, tag2,
// tag3), and waits until all three have.
func leaveScript(dir, tag string) string {
	f := func(n int) string { return filepath.Join(dir, tag+strconv.Itoa(n)) }
	body := func(n int) string {
		return `sh -c 'echo $$ > ` + f(n) + `.tmp && mv ` + f(n) + `.tmp ` + f(n) + `; exec sleep 600'`
	}
	return "setsid -f " + body(1) + "; (" + body(2) + " &) ; nohup " + body(3) + " >/dev/null 2>&1 & " +
		"while [ ! -s " + f(1) + " ] || [ ! -s " + f(2) + " ] || [ ! -s " + f(3) + " ]; do sleep 0.05; done; echo LE''FT"
}

// pidsIn reads the pids leaveScript's programs wrote (tag1…tag3).
func pidsIn(t *testing.T, dir, tag string) []int {
	t.Helper()
	var pids []int
	for n := 1; n <= 3; n++ {
		b, err := os.ReadFile(filepath.Join(dir, tag+strconv.Itoa(n)))
		if err != nil {
			t.Fatalf("the program %s%d never wrote its pid: %v", tag, n, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("pid file %s%d: %q", tag, n, b)
		}
		pids = append(pids, pid)
	}
	return pids
}

// TestEStopKillsWhatLeftTheTree: programs an approved exec and an
// approved session started with setsid -f, a double fork or nohup — which
// Hearth, the child subreaper, adopted when their parents exited, outside
// every process group and terminal session the e-stop's tree kills reach —
// are all gone shortly after the e-stop. (How soon is measured by
// BenchmarkEStopKillsAdopted, not asserted here.)
func TestEStopKillsWhatLeftTheTree(t *testing.T) {
	if err := peeruser.AdoptOrphans(); err != nil {
		t.Skipf("no child subreaper here: %v", err)
	}
	in := hearthtest.Start(t, nil) // ask
	s := sessionClient{t, hearthtest.Connect(t, in.URL, "estop-adopted")}
	dir := t.TempDir()
	approve := func(r *hearthtest.Result) map[string]any {
		t.Helper()
		permit, _ := r.Get("permit_id").(string)
		if r.State() != "pending" || permit == "" {
			t.Fatalf("under ask it must wait for a permit: %s", r.Raw)
		}
		if err := in.App.Operator.Approve(t.Context(), permit, "alice", nil); err != nil {
			t.Fatal(err)
		}
		arr := s.c.WaitArrival(r.Str("future_id"), r)
		if hearthtest.Get(arr, "envelope.state") != "completed" {
			t.Fatalf("the approved call: %v", arr)
		}
		return arr
	}

	// From an approved exec, which has ended by the time the e-stop comes.
	approve(s.call(map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", leaveScript(dir, "exec")}, "cwd": dir}))
	pids := pidsIn(t, dir, "exec")

	// From an approved session, still open.
	arr := approve(s.call(map[string]any{"operation": "session_start", "command": "sh", "cwd": dir}))
	id, _ := hearthtest.Get(arr, "envelope.result.session_id").(string)
	sent := s.completed(map[string]any{"operation": "session_send", "session_id": id, "text": leaveScript(dir, "session"), "keys": []string{"Enter"}})
	s.readUntil(id, sent.Num("result.offset"), "LEFT")
	pids = append(pids, pidsIn(t, dir, "session")...)
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	for _, pid := range pids[:1] {
		if !running(pid) {
			t.Fatalf("the setsid -f program %d of the exec ended before the e-stop: the test proves nothing", pid)
		}
	}

	if err := in.App.Operator.EStop(t.Context(), "alice", "test"); err != nil {
		t.Fatal(err)
	}
	// A generous deadline for a loaded machine; Hearth kills them at once.
	deadline := time.Now().Add(20 * time.Second)
	for _, pid := range pids {
		for running(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d (of %v: exec's setsid, double fork, nohup, then the session's) still runs after the e-stop", pid, pids)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestEStopKeepsSweepingWhileLatched: a process adopted well after the
// e-stop's first sweeps (a call's child that ended late leaves what it
// started to Hearth) is killed while the stop stays latched; after the
// reset, a new one is left alone.
func TestEStopKeepsSweepingWhileLatched(t *testing.T) {
	if err := peeruser.AdoptOrphans(); err != nil {
		t.Skipf("no child subreaper here: %v", err)
	}
	in := hearthtest.Start(t, nil)
	if err := in.App.Operator.EStop(t.Context(), "alice", "test"); err != nil {
		t.Fatal(err)
	}
	// Past the first sweeps (50 ms, 250 ms, 1 s).
	time.Sleep(1500 * time.Millisecond)
	dir := t.TempDir()
	late := leaveOne(t, dir, "late")
	deadline := time.Now().Add(20 * time.Second)
	for running(late) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d, adopted after the first sweeps, still runs while the e-stop is latched", late)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := in.App.Operator.Reset(t.Context(), "alice"); err != nil {
		t.Fatal(err)
	}
	after := leaveOne(t, dir, "after")
	time.Sleep(2500 * time.Millisecond)
	if !running(after) {
		t.Errorf("process %d, adopted after the reset, was killed", after)
	}
}

// leaveOne starts a program with setsid -f from a shell that exits, so
// this process adopts it, and returns its pid.
func leaveOne(t *testing.T, dir, tag string) int {
	t.Helper()
	f := filepath.Join(dir, tag)
	script := "setsid -f sh -c 'echo $$ > " + f + ".tmp && mv " + f + ".tmp " + f + "; exec sleep 600' </dev/null >/dev/null 2>&1"
	if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("start the setsid program: %v %s", err, out)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(f); err == nil {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the program %s never wrote its pid", tag)
		}
	}
}
