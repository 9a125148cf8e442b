package runs_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/govern/governtest"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestScatterReplay: run.scatter is journaled as one command. The same
// command id with the same input answers the first answer (replayed, the
// same future ids) and submits nothing — the fs.write that may only create
// its marker and the exec that appends a line ran once —, another input
// under that id is a conflict, and the calls were journaled under command
// ids derived from the scatter's.
func TestScatterReplay(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "scatter-replay")
	marker := filepath.Join(in.Root, "marker.txt")
	log := filepath.Join(in.Root, "runs.log")
	calls := []any{
		map[string]any{"kind": "fs.write", "path": marker, "data": "once", "expected_sha256": nil},
		map[string]any{"kind": "machine.exec", "command": "sh", "args": []string{"-c", "echo ran >> " + log}},
	}
	meta := map[string]any{"hearth/command_id": "cmd-scatter-replay"}
	args := map[string]any{"operation": "scatter", "calls": calls}

	first, err := c.TryCall("run", args, meta)
	if err != nil || first.IsError {
		t.Fatalf("scatter: %v %v", err, first)
	}
	ids := futureIDs(t, first)
	got := byID(collect(t, c, ids, first))
	for i, id := range ids {
		if got[id].Env["state"] != "completed" {
			t.Fatalf("calls[%d] arrived as %v", i, got[id].Env)
		}
	}

	again, err := c.TryCall("run", args, meta)
	if err != nil {
		t.Fatal(err)
	}
	if again.Get("replayed") != true || again.State() != first.State() {
		t.Fatalf("a repeat of the command id must replay the first answer: %s", again.Raw)
	}
	if re := futureIDs(t, again); !slices.Equal(re, ids) {
		t.Fatalf("replayed future ids %v, first answer %v", re, ids)
	}
	// Nothing more was submitted: no new future in the conversation, and
	// the exec's line is there once (a second fs.write would have failed
	// its "does not exist" precondition and left its own future).
	fl := c.Call("task", map[string]any{"operation": "list"})
	if n := fl.Get("result.count"); n != float64(len(ids)) {
		t.Fatalf("the conversation has %d futures after a replay, want %d: %s", n, len(ids), fl.Raw)
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) != "once" {
		t.Fatalf("marker: %q %v", b, err)
	}
	if b, err := os.ReadFile(log); err != nil || strings.Count(string(b), "ran") != 1 {
		t.Fatalf("the exec ran %d times: %q %v", strings.Count(string(b), "ran"), b, err)
	}

	other := map[string]any{"operation": "scatter", "calls": calls[:1]}
	conflict, err := c.TryCall("run", other, meta)
	if err != nil {
		t.Fatal(err)
	}
	if conflict.State() != "conflict" || conflict.Get("error.code") != "command_id_reused" {
		t.Fatalf("another input under the command id must be a conflict: %s", conflict.Raw)
	}

	// Each call was journaled under a command id derived from the
	// scatter's, and the scatter under its own.
	for _, cmd := range []string{"cmd-scatter-replay", "cmd-scatter-replay/call0", "cmd-scatter-replay/call1"} {
		if st := governtest.CommandState(t, in.App.DB, cmd); st == "" {
			t.Errorf("command %s was not journaled", cmd)
		}
	}
}

// TestScatterReplayAfterRestart: the scatter's answer is journaled, not
// remembered in memory: after a restart the same command id still replays
// it, and submits nothing.
func TestScatterReplayAfterRestart(t *testing.T) {
	home := t.TempDir()
	in := hearthtest.StartHome(t, home, trusted)
	log := filepath.Join(in.Root, "runs.log")
	args := map[string]any{"operation": "scatter", "calls": []any{
		map[string]any{"kind": "machine.exec", "command": "sh", "args": []string{"-c", "echo ran >> " + log}},
	}}
	meta := map[string]any{"hearth/command_id": "cmd-scatter-restart"}
	c := hearthtest.Connect(t, in.URL, "scatter-restart")
	first, err := c.TryCall("run", args, meta)
	if err != nil || first.IsError {
		t.Fatalf("scatter: %v %v", err, first)
	}
	ids := futureIDs(t, first)
	collect(t, c, ids, first)
	in.Stop()

	in = hearthtest.StartHome(t, home, trusted)
	c = hearthtest.Connect(t, in.URL, "scatter-restart")
	again, err := c.TryCall("run", args, meta)
	if err != nil {
		t.Fatal(err)
	}
	if again.Get("replayed") != true || !slices.Equal(futureIDs(t, again), ids) {
		t.Fatalf("after a restart the command id must replay the first answer %v: %s", ids, again.Raw)
	}
	if b, err := os.ReadFile(log); err != nil || strings.Count(string(b), "ran") != 1 {
		t.Fatalf("the exec ran %d times: %q %v", strings.Count(string(b), "ran"), b, err)
	}
}

// TestRecipeRunReplay: recipe.run is a command like run.scatter: the same
// command id answers the first run (replayed) without running a step
// again, another input is a conflict, and the step was journaled under a
// command id derived from the run's.
func TestRecipeRunReplay(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "recipe-replay")
	log := filepath.Join(in.Root, "steps.log")
	r := c.Call("recipe", map[string]any{"operation": "create", "name": "append", "steps": []any{
		map[string]any{"primitive": "machine.exec", "input": map[string]any{"command": "sh", "args": []string{"-c", "echo ran >> " + log}}},
	}})
	if r.State() != "completed" {
		t.Fatalf("create: %s", r.Raw)
	}
	meta := map[string]any{"hearth/command_id": "cmd-recipe-replay"}
	run := map[string]any{"operation": "run", "name": "append"}
	first, err := c.TryCall("recipe", run, meta)
	if err != nil || first.State() != "completed" {
		t.Fatalf("recipe.run: %v %v", err, first)
	}
	again, err := c.TryCall("recipe", run, meta)
	if err != nil {
		t.Fatal(err)
	}
	if again.Get("replayed") != true || again.State() != "completed" {
		t.Fatalf("a repeat of the command id must replay the run: %s", again.Raw)
	}
	if b, err := os.ReadFile(log); err != nil || strings.Count(string(b), "ran") != 1 {
		t.Fatalf("the step ran %d times: %q %v", strings.Count(string(b), "ran"), b, err)
	}
	other, err := c.TryCall("recipe", map[string]any{"operation": "run", "name": "append", "params": map[string]any{"x": "y"}}, meta)
	if err != nil {
		t.Fatal(err)
	}
	if other.State() != "conflict" {
		t.Fatalf("another input under the command id must be a conflict: %s", other.Raw)
	}
	if st := governtest.CommandState(t, in.App.DB, "cmd-recipe-replay/step0"); st == "" {
		t.Fatal("the step's derived command was not journaled")
	}
}
