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
)

// TestStartedForgetsWhatExited: a program that ended is reaped and
// forgotten, so the e-stop's Kill has nothing of it left to signal.
func TestStartedForgetsWhatExited(t *testing.T) {
	s := NewStarted()
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(cmd); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); s.Len() > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a program that exited is still in the set")
		}
	}
	if n, err := s.Kill(); n != 0 || err != nil {
		t.Fatalf("Kill of an empty set: %d, %v", n, err)
	}
}

// TestStartedKillsTheTree: Kill ends a started program and the child it
// waits for, which is no adopted process (its parent lives).
func TestStartedKillsTheTree(t *testing.T) {
	if !pidfdsWork() {
		t.Skip("no pidfds here")
	}
	f := filepath.Join(t.TempDir(), "child")
	cmd := exec.Command("sh", "-c", "sleep 600 & echo $! > "+f+".tmp && mv "+f+".tmp "+f+"; wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := NewStarted()
	if err := s.Add(cmd); err != nil {
		t.Fatal(err)
	}
	var child int
	for deadline := time.Now().Add(20 * time.Second); child == 0; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(f); err == nil {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else if time.Now().After(deadline) {
			t.Fatal("the child never wrote its pid")
		}
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	if n, err := s.Kill(); n != 2 || err != nil {
		t.Fatalf("Kill: %d processes, %v; want the program and its child", n, err)
	}
	for deadline := time.Now().Add(20 * time.Second); s.Len() > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the killed program was not reaped")
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		_, live := liveParent(child)
		if !live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child %d still runs after Kill", child)
		}
	}
}
