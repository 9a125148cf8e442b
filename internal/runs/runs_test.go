package runs_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

func runOp(c *hearthtest.Client, op string, args map[string]any) *hearthtest.Result {
	m := map[string]any{"operation": op}
	for k, v := range args {
		m[k] = v
	}
	return c.Call("run", m)
}

func TestCheckpointLifecycle(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "runs")

	r := runOp(c, "checkpoint", map[string]any{"summary": "no objective"})
	if !r.IsError || !strings.Contains(r.Get("error.message").(string), `"objective"`) {
		t.Fatalf("create without objective: %s", r.Raw)
	}
	r = runOp(c, "checkpoint", map[string]any{"objective": "ship the recipe tool", "acceptance_criteria": []string{"tests pass"}, "next_actions": []string{"write tests"}})
	id, _ := r.Get("result.id").(string)
	if r.IsError || !strings.HasPrefix(id, "run_") || r.Get("result.state") != "open" || r.Get("result.version") != float64(1) {
		t.Fatalf("create: %s", r.Raw)
	}
	r = runOp(c, "checkpoint", map[string]any{"id": id, "summary": "half way", "pending_task_ids": []string{"job_x"}})
	if r.Get("result.version") != float64(2) || r.Get("result.summary") != "half way" || r.Get("result.objective") != "ship the recipe tool" ||
		r.Get("result.acceptance_criteria.0") != "tests pass" || r.Get("result.pending_task_ids.0") != "job_x" {
		t.Fatalf("update keeps what it does not replace: %s", r.Raw)
	}
	r = runOp(c, "checkpoint", map[string]any{"id": id})
	if !r.IsError || r.Get("error.code") != "invalid_input" {
		t.Fatalf("empty update: %s", r.Raw)
	}
	r = runOp(c, "checkpoint", map[string]any{"id": "run_aaaaaaaaaaaaaaaaaaaa", "summary": "x"})
	if !r.IsError || r.Get("error.code") != "not_found" {
		t.Fatalf("unknown run: %s", r.Raw)
	}
	r = runOp(c, "checkpoint", map[string]any{"objective": strings.Repeat("x", 5000)})
	if !r.IsError || !strings.Contains(r.Get("error.message").(string), "at most 4000") {
		t.Fatalf("bounded objective: %s", r.Raw)
	}

	// A run is visible from another conversation (it is how work continues).
	other := hearthtest.Connect(t, in.URL, "another")
	g := runOp(other, "get", map[string]any{"id": id})
	if g.Get("result.summary") != "half way" {
		t.Fatalf("get from another conversation: %s", g.Raw)
	}
	l := runOp(other, "list", map[string]any{"state": "open"})
	if l.Get("result.runs.0.id") != id {
		t.Fatalf("list: %s", l.Raw)
	}

	r = runOp(c, "close", map[string]any{"id": id, "summary": "done"})
	if r.Get("result.state") != "closed" || r.Get("result.summary") != "done" || r.Get("result.closed_at") == nil {
		t.Fatalf("close: %s", r.Raw)
	}
	r = runOp(c, "checkpoint", map[string]any{"id": id, "summary": "after"})
	if !r.IsError || r.State() != "conflict" {
		t.Fatalf("checkpoint of a closed run: %s", r.Raw)
	}
	if l := runOp(c, "list", map[string]any{"state": "open"}); len(l.Get("result.runs").([]any)) != 0 {
		t.Fatalf("closed run listed as open: %s", l.Raw)
	}

	ev := runOp(c, "events", map[string]any{"entity_id": id})
	var kinds []string
	for _, e := range ev.Get("result.events").([]any) {
		kinds = append(kinds, hearthtest.Get(e, "kind").(string))
	}
	if strings.Join(kinds, ",") != "run.created,run.checkpoint,run.closed" {
		t.Fatalf("events of the run: %v", kinds)
	}
	// The log is append-only.
	if _, err := in.App.DB.W.Exec(`UPDATE events SET kind = 'x'`); err == nil {
		t.Fatal("events can be updated")
	}
	if _, err := in.App.DB.W.Exec(`DELETE FROM events WHERE kind = 'run.created'`); err == nil {
		t.Fatal("events can be deleted")
	}
	// The calls above are this conversation's call history, which is kept
	// apart from the events run.events lists.
	in.App.Runs.Events.History(context.Background(), "", 0) // writes what the recorder holds
	var calls int
	if err := in.App.DB.R.QueryRow(`SELECT COALESCE(SUM(calls), 0) FROM call_history`).Scan(&calls); err != nil || calls == 0 {
		t.Fatalf("call history: %d calls (%v), want this test's", calls, err)
	}
	all := runOp(c, "events", map[string]any{"limit": 500})
	for _, e := range all.Get("result.events").([]any) {
		if k, _ := hearthtest.Get(e, "kind").(string); !strings.HasPrefix(k, "run.") {
			t.Fatalf("run.events listed a %q event: %s", k, all.Raw)
		}
	}
}

// TestContinuations: a due continuation without a target is blocked; with
// a target and oracle.armed false it carries a dry-run command; Hearth
// never claims to have run either, and the due record arrives in the
// scheduling conversation.
func TestContinuations(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "cont")
	id := runOp(c, "checkpoint", map[string]any{"objective": "resume later"}).Get("result.id").(string)

	var seen []*hearthtest.Result // responses that may carry the arrivals
	r := runOp(c, "schedule_continuation", map[string]any{"run_id": id, "prompt": "carry on", "delay_ms": 0})
	seen = append(seen, r)
	noTarget, _ := r.Get("result.id").(string)
	if r.IsError || !strings.HasPrefix(noTarget, "cnt_") {
		t.Fatalf("schedule: %s", r.Raw)
	}
	prompt := `check "it's" $(done); next`
	r = runOp(c, "schedule_continuation", map[string]any{"run_id": id, "prompt": prompt, "delay_ms": 200, "target": map[string]any{"session": "my-session"}})
	seen = append(seen, r)
	withTarget, _ := r.Get("result.id").(string)
	if r.Get("result.state") != "scheduled" || r.Get("result.executed") != false {
		t.Fatalf("schedule with target: %s", r.Raw)
	}
	for _, bad := range []map[string]any{
		{"run_id": id, "prompt": "x", "delay_ms": 1, "run_at": "2030-01-01T00:00:00Z"},
		{"run_id": id, "prompt": "x", "run_at": "tomorrow"},
		{"run_id": id, "prompt": "x", "target": map[string]any{"session": "a", "browser_tab": "b"}},
		{"run_id": id, "prompt": "x", "target": map[string]any{"window": "a"}},
		{"run_id": "run_aaaaaaaaaaaaaaaaaaaa", "prompt": "x"},
		{"run_id": id, "prompt": " "},
	} {
		r := runOp(c, "schedule_continuation", bad)
		if !r.IsError {
			t.Errorf("%v accepted: %s", bad, r.Raw)
		}
		seen = append(seen, r)
	}

	got := byID(collect(t, c, []string{noTarget, withTarget}, seen...))
	if hearthtest.Get(got[noTarget].Env, "state") != "blocked" || hearthtest.Get(got[noTarget].Env, "error.code") != "no_target" {
		t.Errorf("due without a target: %v", got[noTarget].Env)
	}
	if hearthtest.Get(got[withTarget].Env, "error.code") != "dry_run" || hearthtest.Get(got[withTarget].Env, "error.details.executed") != false {
		t.Errorf("due with a target, not armed: %v", got[withTarget].Env)
	}

	s := runOp(c, "continuation_status", map[string]any{"id": withTarget})
	argv, _ := s.Get("result.command.argv").([]any)
	if s.Get("result.state") != "dry_run" || s.Get("result.executed") != false || len(argv) == 0 || argv[len(argv)-1] != prompt ||
		!slices.Contains(argv, any("--dry-run")) || s.Get("result.command.dry_run") != true {
		t.Fatalf("dry-run status: %s", s.Raw)
	}
	if text, _ := s.Get("result.command.text").(string); runtime.GOOS != "windows" && !strings.Contains(text, `'check "it'\''s" $(done); next'`) {
		t.Errorf("command text must quote the prompt as one argument: %q", text)
	}
	s = runOp(c, "continuation_status", map[string]any{"id": noTarget})
	if s.Get("result.state") != "blocked" || s.Get("result.command") != nil || s.Get("result.executed") != false {
		t.Fatalf("blocked status: %s", s.Raw)
	}
	g := runOp(c, "get", map[string]any{"id": id})
	if len(g.Get("result.continuations").([]any)) != 2 {
		t.Fatalf("run lists its continuations: %s", g.Raw)
	}
	// No secret and no claim: nothing in the database says it was sent.
	var n int
	in.App.DB.R.QueryRow(`SELECT COUNT(*) FROM continuations WHERE state NOT IN ('blocked','dry_run')`).Scan(&n)
	if n != 0 {
		t.Errorf("%d continuations in another state", n)
	}
}

func TestContinuationArmedBuildsButDoesNotRun(t *testing.T) {
	home := t.TempDir()
	in := hearthtest.StartHome(t, home, func(c *config.Config) { trusted(c); c.Oracle.Armed = true })
	c := hearthtest.Connect(t, in.URL, "armed")
	id := runOp(c, "checkpoint", map[string]any{"objective": "armed"}).Get("result.id").(string)
	r := runOp(c, "schedule_continuation", map[string]any{"run_id": id, "prompt": "go", "run_at": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339), "target": map[string]any{"browser_tab": "tab-1"}})
	cid := r.Get("result.id").(string)
	s := runOp(c, "continuation_status", map[string]any{"id": cid})
	if s.Get("result.state") != "ready" || s.Get("result.executed") != false || s.Get("result.command.dry_run") != false {
		t.Fatalf("armed status: %s", s.Raw)
	}
	if argv := s.Get("result.command.argv").([]any); slices.Contains(argv, any("--dry-run")) {
		t.Fatalf("armed command is still a dry run: %v", argv)
	}
	if _, err := os.Stat(filepath.Join(home, "oracle")); err == nil {
		t.Fatal("something ran")
	}
}
