//go:build !windows

package govern_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestBeginRechecksTheLatch: a call admitted just before the e-stop
// latches is refused when it begins (Begin reads the latch in the same
// write transaction Latch uses), so it cannot run unstopped.
func TestBeginRechecksTheLatch(t *testing.T) {
	in := hearthtest.Start(t, hearthtest.Trusted)
	spec, _ := in.App.Registry.Lookup("machine.exec")
	a := dispatch.NewAdmission(dispatch.Request{Route: "r:test", Spec: spec, Input: json.RawMessage(`{"command":"echo"}`)}, "")
	if err := in.App.Gov.Admit(bg, a); err != nil {
		t.Fatalf("admit before the latch: %v", err)
	}
	if err := in.App.Gov.Latch(bg, "operator:test", "race"); err != nil {
		t.Fatal(err)
	}
	err := in.App.Gov.Begin(bg, a)
	if err == nil || !strings.Contains(err.Error(), "emergency stop") {
		t.Fatalf("Begin after the latch must refuse: %v", err)
	}
}

// TestJobRunsAreGovernedWhenTheyStart: a delayed job queued in trusted
// mode does not run after the operator switches to read-only.
func TestJobRunsAreGovernedWhenTheyStart(t *testing.T) {
	in := hearthtest.Start(t, hearthtest.Trusted)
	c := hearthtest.Connect(t, in.URL, "jobs")
	marker := filepath.Join(in.Home, "ran")
	r := c.Call("task", map[string]any{"operation": "submit", "job": map[string]any{"command": "touch", "args": []string{marker}, "delay_ms": 600}})
	id, _ := hearthtest.Get(r.Env, "result.jobs.0.id").(string)
	if id == "" {
		t.Fatalf("submit: %s", r.Raw)
	}
	if err := in.App.Operator.SetPolicy(bg, "alice", config.ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	w := c.Call("task", map[string]any{"operation": "wait", "id": id, "timeout_ms": 10000})
	for i := 0; i < 2 && (w.Get("result.job.state") == "queued" || w.Get("result.job.state") == "running"); i++ {
		w = c.Call("task", map[string]any{"operation": "wait", "id": id, "timeout_ms": 10000}) // wait returns on queued -> running too
	}
	if w.Get("result.job.state") != "blocked" || !strings.Contains(string(w.Raw), "read-only") {
		t.Fatalf("a job starting under read-only must be blocked: %s", w.Raw)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the job ran under read-only")
	}
}

func TestReplayAfterDenyReturnsTheOutcome(t *testing.T) {
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "deny-replay")
	meta := map[string]any{"hearth/command_id": "cmd-deny-1"}
	args := map[string]any{"operation": "exec", "command": "echo", "args": []string{"x"}}
	r, _ := c.TryCall("machine", args, meta)
	if err := in.App.Operator.Deny(bg, r.Get("permit_id").(string), "alice"); err != nil {
		t.Fatal(err)
	}
	c.WaitArrival(r.Get("future_id").(string), r)
	again, _ := c.TryCall("machine", args, meta)
	if again.State() != "blocked" || again.Get("error.code") != "permit_denied" || again.Get("replayed") != true {
		t.Fatalf("a retry after denial must replay the denial: %s", again.Raw)
	}
}

func TestBaseNameRuleCoversOnlyPathLookups(t *testing.T) {
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "rules2")
	if _, err := in.App.Operator.AddRule(bg, "alice", "echo", "", "ok"); err != nil {
		t.Fatal(err)
	}
	if r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"ok"}}); r.State() != "completed" {
		t.Fatalf("echo through PATH: %s", r.Raw)
	}
	echo := filepath.Join(in.Root, "echo")
	if err := os.WriteFile(echo, []byte("#!/bin/sh\necho planted\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{
		{"operation": "exec", "command": echo},
		{"operation": "exec", "command": "./echo", "cwd": in.Root},
		{"operation": "exec", "command": "echo", "env": map[string]string{"LD_PRELOAD": "/tmp/x.so"}},
	} {
		if r := c.Call("machine", args); r.State() != "pending" || r.Get("permit_id") == nil {
			t.Errorf("%v must need a permit despite the rule for echo: %s", args, r.Raw)
		}
	}
}

func TestConfigFileIsNotReachableThroughFS(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	cfgPath := filepath.Join(root, "hearth-config.json")
	c := config.Default()
	c.Roots = []string{root}
	if err := config.Write(cfgPath, c); err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Options{DataDir: home, ConfigPath: cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.FS.Roots.Resolve(cfgPath); err == nil {
		t.Fatal("the config file under a root must be refused by fs containment")
	}
	if _, err := a.FS.Roots.Resolve(filepath.Join(root, "other.txt")); err != nil {
		t.Fatalf("the rest of the root stays reachable: %v", err)
	}
}

func TestArtifactListIsPerConversation(t *testing.T) {
	in := hearthtest.Start(t, func(c *config.Config) { hearthtest.Trusted(c); c.MaxOutputBytes = 256 })
	a := hearthtest.Connect(t, in.URL, "owner")
	b := hearthtest.Connect(t, in.URL, "other")
	r := a.Call("machine", map[string]any{"operation": "exec", "command": "seq", "args": []string{"1", "500"}})
	id, _ := r.Get("result.stdout.artifact.id").(string)
	if id == "" {
		t.Fatalf("no spill: %s", r.Raw)
	}
	if l := b.Call("artifact", map[string]any{"operation": "list"}); strings.Contains(string(l.Raw), id) {
		t.Fatalf("another conversation lists the artifact: %s", l.Raw)
	}
	if l := a.Call("artifact", map[string]any{"operation": "list"}); !strings.Contains(string(l.Raw), id) {
		t.Fatalf("the owner does not list its artifact: %s", l.Raw)
	}
}

func TestAnonymousCallsAreAnsweredWhenDone(t *testing.T) {
	// The shipped budget, which the 0.4 s call outlasts.
	in := hearthtest.Start(t, func(c *config.Config) { hearthtest.Trusted(c); hearthtest.ProductionBudget(c) })
	c := hearthtest.Connect(t, in.URL, "") // no conversation
	start := time.Now()
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "sleep 0.4; echo late"}})
	if r.State() != "completed" || r.Get("result.stdout.text") != "late\n" || time.Since(start) < 400*time.Millisecond {
		t.Fatalf("an anonymous call has no mailbox, so it is answered when done: %s", r.Raw)
	}
	if r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "detach": true}); !r.IsError || !strings.Contains(r.Get("error.message").(string), "hearth/conversation") {
		t.Fatalf("detach without a conversation: %s", r.Raw)
	}
	r2, err := c.TryCall("machine", map[string]any{"operation": "exec", "command": "echo"}, map[string]any{"hearth/command_id": "c1"})
	if err != nil || !r2.IsError || !strings.Contains(r2.Get("error.message").(string), "hearth/conversation") {
		t.Fatalf("a command id without a conversation: %v %s", err, r2.Raw)
	}
}

// TestCancellingAParkedCallWithdrawsItsPermit: task.cancel of a call
// waiting for the operator withdraws the permit (journaled), so the
// operator is not left with a permit that can no longer run anything.
func TestCancellingAParkedCallWithdrawsItsPermit(t *testing.T) {
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "cancel-parked")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"never"}})
	pid, fid := r.Get("permit_id").(string), r.Get("future_id").(string)
	if x := c.Call("task", map[string]any{"operation": "cancel", "id": fid}); x.IsError {
		t.Fatalf("cancel: %s", x.Raw)
	}
	if ps, _ := in.App.Operator.Permits(bg, "pending"); len(ps) != 0 {
		t.Fatalf("the permit of a cancelled call is still pending: %+v", ps)
	}
	if err := in.App.Operator.Approve(bg, pid, "alice", nil); err == nil {
		t.Fatal("approving a withdrawn permit must fail")
	}
}

func TestScatterAllRefusedIsBlocked(t *testing.T) {
	in := hearthtest.Start(t, hearthtest.Trusted)
	c := hearthtest.Connect(t, in.URL, "scatter-estop")
	c.Call("machine", map[string]any{"operation": "estop", "reason": "t"})
	r := c.Call("run", map[string]any{"operation": "scatter", "calls": []any{map[string]any{"kind": "machine.exec", "command": "echo"}}})
	if !r.IsError || r.State() != "blocked" || r.Get("error.code") != "all_refused" {
		t.Fatalf("a scatter whose every call is refused must not read as completed: %s", r.Raw)
	}
}

// TestHearthsOwnProgramsAreNotReachableThroughFS: the model cannot plant a
// tunnel-client beside the running executable (Hearth would hand it the
// runtime key) nor replace the executable.
func TestHearthsOwnProgramsAreNotReachableThroughFS(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	home := t.TempDir()
	dir := filepath.Dir(exe)
	c := config.Default()
	c.Roots = []string{dir}
	cfgPath := filepath.Join(home, "config.json")
	if err := config.Write(cfgPath, c); err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(context.Background(), app.Options{DataDir: home, ConfigPath: cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, p := range []string{exe, filepath.Join(dir, "tunnel-client"), filepath.Join(dir, "tunnel-client.exe")} {
		if _, err := a.FS.Roots.Resolve(p); err == nil {
			t.Errorf("%s must be refused by fs containment", filepath.Base(p))
		}
	}
	if _, err := a.FS.Roots.Resolve(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("the rest of the directory stays reachable: %v", err)
	}
}
