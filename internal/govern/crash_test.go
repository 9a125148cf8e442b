//go:build !windows

package govern_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/store"
)

func verifyLedger(t *testing.T, home string) ledger.Report {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rep, err := ledger.VerifyDB(context.Background(), db)
	if err != nil {
		t.Fatalf("ledger does not verify: %v", err)
	}
	return rep
}

// TestCrashBetweenIntentAndOutcome SIGKILLs a real serve while a journaled
// exec runs: on restart the command is UNKNOWN, the conversation's gate is
// closed until task.reconcile, and the ledger verifies throughout.
func TestCrashBetweenIntentAndOutcome(t *testing.T) {
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, hearthtest.Trusted)
	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "crash")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "sleep", "args": []string{"30"}})
	if r.State() != "pending" {
		t.Fatalf("%s", r.Raw)
	}
	cmd := r.Get("command_id").(string)
	// The job says when its process runs: a job seen running may still be
	// between its claim and its journaled intent, and one killed there
	// provably never started, so it is queued again instead of blocked.
	started := filepath.Join(t.TempDir(), "started")
	j := c.Call("task", map[string]any{"operation": "submit", "job": map[string]any{"command": "sh",
		"args": []string{"-c", `touch "$1"; exec sleep 30`, "sh", started}, "on_interrupt": "block"}})
	jobID, _ := hearthtest.Get(j.Env, "result.jobs.0.id").(string)
	if jobID == "" {
		t.Fatalf("submit: %s", j.Raw)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		g := c.Call("task", map[string]any{"operation": "get", "id": jobID})
		if _, err := os.Stat(started); err == nil && g.Get("result.job.state") == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job did not start: %s", g.Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.Kill()
	before := verifyLedger(t, home)

	p2 := hearthtest.StartProcess(t, home)
	c2 := hearthtest.Connect(t, p2.URL, "crash")
	other := hearthtest.Connect(t, p2.URL, "other")
	r = c2.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"after"}})
	if r.State() != "blocked" || r.Get("error.code") != "unknown_open" || r.Get("error.details.command_id") != cmd {
		t.Fatalf("gate must be closed naming %s: %s", cmd, r.Raw)
	}
	if r := other.Call("machine", map[string]any{"operation": "exec", "command": "echo"}); r.State() != "completed" {
		t.Fatalf("another conversation is not gated: %s", r.Raw)
	}
	if r := c2.Call("machine", map[string]any{"operation": "host_info"}); r.State() != "completed" {
		t.Fatalf("reads stay open: %s", r.Raw)
	}
	r = c2.Call("task", map[string]any{"operation": "reconcile", "id": cmd, "observed": "the sleep is gone; nothing to undo"})
	if r.State() != "completed" {
		t.Fatalf("reconcile: %s", r.Raw)
	}
	// The interrupted job (on_interrupt "block") also closed the gate.
	r = c2.Call("machine", map[string]any{"operation": "exec", "command": "echo"})
	if r.Get("error.code") != "unknown_open" || r.Get("error.details.command_id") != jobID {
		t.Fatalf("a blocked interrupted job must close the gate naming %s: %s", jobID, r.Raw)
	}
	if r := c2.Call("task", map[string]any{"operation": "reconcile", "id": jobID, "observed": "job did not finish"}); r.State() != "completed" {
		t.Fatalf("reconcile job: %s", r.Raw)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r = c2.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"after"}})
		if r.State() == "completed" || time.Now().After(deadline) {
			break
		}
	}
	if r.Get("result.stdout.text") != "after\n" {
		t.Fatalf("gate must reopen after reconcile: %s", r.Raw)
	}
	if err := p2.Interrupt(t); err != nil {
		t.Fatal(err)
	}
	after := verifyLedger(t, home)
	if after.Entries <= before.Entries {
		t.Fatalf("ledger did not grow: %d → %d", before.Entries, after.Entries)
	}
}
