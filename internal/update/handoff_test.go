//go:build !windows

package update

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestApplyRollsBackANewVersionThatNeverBecomesHealthy: a new program
// that runs but never publishes itself is stopped once HealthWithin
// passes (its process is gone), the previous program is back in its place
// and started again, and the outcome says what happened. (The database
// side is TestUpdateRollsBackANewVersionThatExits's, with a real serve.)
func TestApplyRollsBackANewVersionThatNeverBecomesHealthy(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	exe := filepath.Join(dir, ProgramName())
	marks := t.TempDir()
	// The previous version only notes that it was started again.
	old := []byte("#!/bin/sh\ntouch " + filepath.Join(marks, "old-started") + "\n")
	if err := os.WriteFile(exe, old, 0o755); err != nil {
		t.Fatal(err)
	}
	// The new one notes its process id and hangs.
	hang := filepath.Join(data, "staged-new")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\necho $$ > "+filepath.Join(marks, "new-pid")+"\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	o := Apply(context.Background(), Plan{From: "1.0.0", To: "1.1.0", NewExe: hang}, Handoff{
		Exe: exe, DataDir: data, ConfigPath: filepath.Join(data, "config.json"), HealthWithin: time.Second,
	})
	if o.Result != ResultRolledBack || !strings.Contains(o.Detail, "not healthy within 1s") {
		t.Fatalf("outcome: %+v", o)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("took %s", took)
	}
	if b := readFile(t, exe); !bytes.Equal(b, old) {
		t.Fatalf("the program in place is %q", b)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(readFile(t, filepath.Join(marks, "new-pid")))))
	if err != nil {
		t.Fatal(err)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("the unhealthy new version (pid %d) still runs", pid)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(marks, "old-started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the previous version was not started again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if saved, ok, err := ReadOutcome(data); err != nil || !ok || saved.Result != ResultRolledBack {
		t.Fatalf("outcome.json: %+v %v %v", saved, ok, err)
	}
}
