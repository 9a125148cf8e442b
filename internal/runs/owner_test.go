package runs_test

import (
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestContinuationOwnedByItsConversation: another conversation asking for
// a continuation by id gets not_found, exactly as for an id that never
// existed, and its run.get lists none of it (a run is shared, its
// continuations' prompts are not). The owning conversation still reads
// it both ways.
func TestContinuationOwnedByItsConversation(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	owner := hearthtest.Connect(t, in.URL, "owner")
	other := hearthtest.Connect(t, in.URL, "other")
	runID := runOp(owner, "checkpoint", map[string]any{"objective": "shared run"}).Get("result.id").(string)
	const prompt = "the owner's private prompt"
	r := runOp(owner, "schedule_continuation", map[string]any{"run_id": runID, "prompt": prompt, "delay_ms": 3_600_000})
	id, _ := r.Get("result.id").(string)
	if r.IsError || !strings.HasPrefix(id, "cnt_") {
		t.Fatalf("schedule: %s", r.Raw)
	}

	if s := runOp(owner, "continuation_status", map[string]any{"id": id}); s.Get("result.prompt") != prompt {
		t.Fatalf("the owner cannot read its continuation: %s", s.Raw)
	}
	theirs := runOp(other, "continuation_status", map[string]any{"id": id})
	const missing = "cnt_aaaaaaaaaaaaaaaaaaaa"
	none := runOp(other, "continuation_status", map[string]any{"id": missing})
	if !theirs.IsError || theirs.Get("error.code") != "not_found" {
		t.Fatalf("another conversation read the continuation: %s", theirs.Raw)
	}
	if strings.Contains(string(theirs.Raw), prompt) {
		t.Fatalf("the answer holds the prompt: %s", theirs.Raw)
	}
	if got, want := theirs.Get("error.message"), strings.ReplaceAll(none.Get("error.message").(string), missing, id); got != want {
		t.Errorf("another conversation's answer %q differs from a missing id's %q", got, want)
	}

	if g := runOp(other, "get", map[string]any{"id": runID}); g.IsError || len(listOf(g.Get("result.continuations"))) != 0 || strings.Contains(string(g.Raw), prompt) {
		t.Errorf("another conversation's run.get lists the continuation: %s", g.Raw)
	}
	if g := runOp(owner, "get", map[string]any{"id": runID}); len(listOf(g.Get("result.continuations"))) != 1 {
		t.Errorf("the owner's run.get does not list its continuation: %s", g.Raw)
	}
	if c := runOp(other, "close", map[string]any{"id": runID}); c.IsError || len(listOf(c.Get("result.continuations"))) != 0 {
		t.Errorf("run.close by another conversation lists the continuation: %s", c.Raw)
	}
}

func listOf(v any) []any { l, _ := v.([]any); return l }
