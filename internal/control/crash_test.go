//go:build !windows

package control_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// lines counts the lines a marker file holds (0 when it does not exist).
func lines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// arrivals collects the arrivals of futureIDs in c's conversation, which
// may ride on any response (so one loop reads them all), for a minute at
// most.
func arrivals(t *testing.T, c *hearthtest.Client, futureIDs ...string) map[string]map[string]any {
	t.Helper()
	got := map[string]map[string]any{}
	for deadline := time.Now().Add(time.Minute); len(got) < len(futureIDs); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("arrived %v of %v", got, futureIDs)
		}
		for _, a := range c.Call("machine", map[string]any{"operation": "host_info"}).Arrivals() {
			if id, _ := a["future_id"].(string); slices.Contains(futureIDs, id) {
				got[id] = a
			}
		}
	}
	return got
}

// appendLine is a machine.exec input that appends one line to marker.
func appendLine(marker string) map[string]any {
	return map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", `echo ran >> "$1"`, "sh", marker}}
}

// TestDecisionCommittedBeforeACrashIsCarriedOut: a permit decision is
// committed before the parked work is released, so a process killed
// (SIGKILL) in between leaves an approved permit over work still parked.
// The gap is made exactly: the decisions are recorded through governance
// alone (the offline handle the CLI uses, which holds no engine) while the
// serve runs, and the serve is then killed. The next start carries each
// decision out: the approved call runs once, the approved job's run runs
// once, and the denied call arrives blocked, not lost.
func TestDecisionCommittedBeforeACrashIsCarriedOut(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, hearthtest.Trusted)
	dir := t.TempDir()
	callMarker, jobMarker := filepath.Join(dir, "call"), filepath.Join(dir, "job")

	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "decided-before-crash")
	// A job submitted under trusted, due shortly after the policy tightens.
	sub := c.Call("task", map[string]any{"operation": "submit", "job": map[string]any{
		"command": "sh", "args": []string{"-c", `echo ran >> "$1"`, "sh", jobMarker}, "delay_ms": 5000}})
	jobID, _ := sub.Get("result.id").(string)
	if jobID == "" {
		t.Fatalf("submit: %s", sub.Raw)
	}
	off, err := app.OpenOffline(ctx, home, filepath.Join(home, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	if err := off.Operator.SetPolicy(ctx, "alice", config.ModeAsk); err != nil {
		t.Fatal(err)
	}
	approved := c.Call("machine", appendLine(callMarker))
	denied := c.Call("machine", appendLine(callMarker))
	for _, r := range []*hearthtest.Result{approved, denied} {
		if r.State() != "pending" || r.Get("permit_id") == nil {
			t.Fatalf("a call under ask must park for a permit: %s", r.Raw)
		}
	}
	// The job comes due and parks for a permit of its own.
	var jobPermit string
	for deadline := time.Now().Add(30 * time.Second); jobPermit == ""; time.Sleep(20 * time.Millisecond) {
		ps, err := off.Operator.Permits(ctx, "pending")
		if err != nil {
			t.Fatal(err)
		}
		for _, pm := range ps {
			if pm.FutureID == jobID {
				jobPermit = pm.ID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s never asked for a permit", jobID)
		}
	}

	for _, pid := range []string{approved.Get("permit_id").(string), jobPermit} {
		d, err := off.Operator.Approve(ctx, pid, "alice", nil)
		if err != nil || !d.Approved() {
			t.Fatalf("approve %s: %+v %v", pid, d, err)
		}
	}
	if d, err := off.Operator.Deny(ctx, denied.Get("permit_id").(string), "alice"); err != nil || d.Approved() {
		t.Fatalf("deny: %+v %v", d, err)
	}
	// Governance alone carried nothing out: the running serve was not told.
	if n := lines(t, callMarker) + lines(t, jobMarker); n != 0 {
		t.Fatalf("%d runs before any engine released the approved work", n)
	}
	if g := c.Call("task", map[string]any{"operation": "get", "id": approved.Get("future_id").(string)}); g.Get("result.future.state") != "permit" {
		t.Fatalf("the approved call must still be parked before the crash: %s", g.Raw)
	}
	p.Kill()

	p2 := hearthtest.StartProcess(t, home)
	c2 := hearthtest.Connect(t, p2.URL, "decided-before-crash")
	arr := arrivals(t, c2, approved.Get("future_id").(string), denied.Get("future_id").(string))
	if a := arr[approved.Get("future_id").(string)]; hearthtest.Get(a, "envelope.state") != "completed" {
		t.Fatalf("the call approved before the crash: %v", a)
	}
	if a := arr[denied.Get("future_id").(string)]; hearthtest.Get(a, "envelope.state") != "blocked" || hearthtest.Get(a, "envelope.error.code") != "permit_denied" {
		t.Fatalf("the call denied before the crash: %v", a)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		w := c2.Call("task", map[string]any{"operation": "wait", "id": jobID, "timeout_ms": 10000})
		st := w.Get("result.job.state")
		if st == "completed" {
			break
		}
		if (st != "queued" && st != "running") || time.Now().After(deadline) {
			t.Fatalf("the job approved before the crash: %s", w.Raw)
		}
	}
	if n := lines(t, callMarker); n != 1 {
		t.Fatalf("the approved call ran %d times, want once (the denied one never)", n)
	}
	if n := lines(t, jobMarker); n != 1 {
		t.Fatalf("the approved job ran %d times, want once", n)
	}
	if err := p2.Interrupt(t); err != nil {
		t.Fatal(err)
	}
}
