package runs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestScatterSurvivesRestart kills a real serve process (SIGKILL) in the
// middle of scatters: a completed call stays completed; running calls
// become blocked with outcome unknown and are never replayed, so their
// dependents are blocked; queued calls and waiting calls whose
// dependencies complete run after the restart.
func TestScatterSurvivesRestart(t *testing.T) {
	needsPOSIX(t)
	if testing.Short() {
		t.Skip("builds and runs a serve process")
	}
	home := t.TempDir()
	cfg := config.Default()
	cfg.Roots = []string{home}
	cfg.Policy.Mode = config.ModeTrusted
	cfg.MaxConcurrentFutures = 2
	if err := config.Write(filepath.Join(home, "config.json"), cfg); err != nil {
		t.Fatal(err)
	}
	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "restart")

	first := scatter(c, map[string]any{"kind": "machine.exec", "command": "echo", "args": []string{"before"}})
	done := futureIDs(t, first)[0]
	collect(t, c, []string{done}, first)

	// Each long call appends a line to its marker before it sleeps, so a
	// replay after the restart would append a second line at once.
	markers := []string{filepath.Join(home, "started-b"), filepath.Join(home, "started-d")}
	long := scatter(c,
		map[string]any{"kind": "machine.exec", "command": "sh", "args": []string{"-c", "echo b >> " + markers[0] + "; sleep 60"}},
		map[string]any{"kind": "machine.exec", "command": "sh", "args": []string{"-c", "echo d >> " + markers[1] + "; sleep 60"}},
	)
	running := futureIDs(t, long)
	waitState(t, c, running, "running")
	for _, m := range markers {
		waitLines(t, m, 1)
	}

	// After the restart the conversation has an open UNKNOWN outcome, which
	// (governance) refuses its side-effecting calls until reconciled; so the
	// calls meant to run after the restart are read-only ones.
	rest := scatter(c,
		map[string]any{"kind": "machine.host_info"},                                                                         // queued: no free slot
		map[string]any{"kind": "run.events", "entity_id": ref(0, "result.hearth")},                                          // waits on 0
		map[string]any{"kind": "machine.exec", "command": "echo", "args": []string{"x"}, "dependencies": []any{running[0]}}, // waits on a running call
		map[string]any{"kind": "machine.process_list", "dependencies": []any{done}},                                         // dependency done: queued
	)
	later := futureIDs(t, rest)
	states := map[string]string{}
	for i, f := range rest.Get("result.futures").([]any) {
		states[later[i]], _ = hearthtest.Get(f, "state").(string)
	}
	if states[later[0]] != "queued" || states[later[1]] != "waiting" || states[later[2]] != "waiting" || states[later[3]] != "queued" {
		t.Fatalf("before the kill: %s", rest.Raw)
	}
	p.Kill()

	p2 := hearthtest.StartProcess(t, home)
	c2 := hearthtest.Connect(t, p2.URL, "restart")
	got := byID(collect(t, c2, append(append([]string{}, running...), later...)))
	for _, id := range running {
		if hearthtest.Get(got[id].Env, "state") != "blocked" || hearthtest.Get(got[id].Env, "error.code") != "unknown" {
			t.Errorf("interrupted call %s must be blocked/unknown: %v", id, got[id].Env)
		}
		g := c2.Call("task", map[string]any{"operation": "get", "id": id})
		if g.Get("result.future.outcome") != "unknown" {
			t.Errorf("interrupted call %s outcome: %s", id, g.Raw)
		}
	}
	if hearthtest.Get(got[later[0]].Env, "result.hearth") == nil {
		t.Errorf("queued call after restart: %v", got[later[0]].Env)
	}
	if _, ok := hearthtest.Get(got[later[1]].Env, "result.events").([]any); !ok || hearthtest.Get(got[later[1]].Env, "state") != "completed" {
		t.Errorf("waiting call after restart: %v", got[later[1]].Env)
	}
	if hearthtest.Get(got[later[2]].Env, "error.code") != "dependency_failed" {
		t.Errorf("dependent of an interrupted call: %v", got[later[2]].Env)
	}
	if hearthtest.Get(got[later[3]].Env, "state") != "completed" {
		t.Errorf("queued process_list after restart: %v", got[later[3]].Env)
	}
	g := c2.Call("task", map[string]any{"operation": "get", "id": done})
	if g.Get("result.future.state") != "completed" || !strings.Contains(string(g.Raw), "before") {
		t.Errorf("completed call must stay completed: %s", g.Raw)
	}
	// A replay would have started by now: the restarted process has
	// delivered every arrival and run the calls queued after the restart.
	time.Sleep(300 * time.Millisecond)
	for _, m := range markers {
		if n := lines(t, m); n != 1 {
			t.Errorf("%s has %d lines, want 1: an interrupted call was replayed", filepath.Base(m), n)
		}
	}
	if err := p2.Interrupt(t); err != nil {
		t.Fatalf("serve did not exit cleanly: %v\n%s", err, p2.Stderr.String())
	}
}

// waitState polls task.get until every future is in state.
func waitState(t *testing.T, c *hearthtest.Client, ids []string, state string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range ids {
		for {
			r := c.Call("task", map[string]any{"operation": "get", "id": id})
			if r.Get("result.future.state") == state {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("future %s never became %s: %s", id, state, r.Raw)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// lines counts the lines of a marker file.
func lines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read marker: %v", err)
	}
	return strings.Count(string(b), "\n")
}

// waitLines waits until the marker file holds n lines.
func waitLines(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.Count(string(b), "\n") >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never had %d lines", filepath.Base(path), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
