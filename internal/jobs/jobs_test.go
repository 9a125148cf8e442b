package jobs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/jobs"
	"github.com/hearth-dev/hearth/internal/primitive"
)

const route = "r:test-conversation"

// appendLine is a job that appends label to file.
func appendLine(label, file string) map[string]any {
	return sh(`echo "$0" >> "$1"`, label, file)
}

func readLines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func TestChainRunsInOrder(t *testing.T) {
	e := newEnv(t, envOpts{maxJobs: 4})
	f := filepath.Join(t.TempDir(), "order")
	ids := e.submit(route,
		with(appendLine("a", f)),
		with(appendLine("b", f), "dependencies", []any{0}),
		with(appendLine("c", f), "dependencies", []any{1}),
	)
	// A fourth job depends on the chain's tail by id, in a later submit.
	more := e.submit(route, with(appendLine("d", f), "dependencies", []any{ids[2]}))
	for _, id := range append(ids, more...) {
		if j := e.wait(route, id); j.State != jobs.StateCompleted || j.Attempts != 1 {
			t.Fatalf("job %s: %s attempts %d (%s)", id, j.State, j.Attempts, j.Reason)
		}
	}
	if got := strings.Join(readLines(t, f), ""); got != "abcd" {
		t.Fatalf("chain ran as %q, want abcd", got)
	}
	j := e.wait(route, more[0])
	if len(j.Dependencies) != 1 || j.Dependencies[0] != ids[2] {
		t.Fatalf("dependencies of d: %v", j.Dependencies)
	}
}

func TestDiamond(t *testing.T) {
	e := newEnv(t, envOpts{maxJobs: 4})
	dir := t.TempDir()
	f := filepath.Join(dir, "order")
	// b and c sleep so that d starting early would be visible.
	ids := e.submit(route,
		appendLine("a", f),
		with(sh(`sleep 0.8; echo "$0" >> "$1"`, "b", f), "dependencies", []any{0}),
		with(sh(`sleep 0.1; echo "$0" >> "$1"`, "c", f), "dependencies", []any{0}),
		with(appendLine("d", f), "dependencies", []any{1, 2}),
	)
	for _, id := range ids {
		if j := e.wait(route, id); j.State != jobs.StateCompleted {
			t.Fatalf("job %s: %s (%s)", id, j.State, j.Reason)
		}
	}
	got := readLines(t, f)
	if strings.Join(got, "") != "acbd" {
		t.Fatalf("diamond ran as %v, want a, c, b, d", got)
	}
	b, c, d := e.wait(route, ids[1]), e.wait(route, ids[2]), e.wait(route, ids[3])
	if d.StartedAt.Before(*b.FinishedAt) || d.StartedAt.Before(*c.FinishedAt) {
		t.Fatalf("d started %v before b %v / c %v finished", d.StartedAt, b.FinishedAt, c.FinishedAt)
	}
	// b and c ran concurrently (both depend only on a).
	if !b.StartedAt.Before(*c.FinishedAt) {
		t.Errorf("b and c did not overlap: b started %v, c finished %v", b.StartedAt, c.FinishedAt)
	}
}

func TestFailedParentBlocksDependentsTransitively(t *testing.T) {
	e := newEnv(t, envOpts{})
	f := filepath.Join(t.TempDir(), "ran")
	ids := e.submit(route,
		sh("exit 3"),
		with(appendLine("b", f), "dependencies", []any{0}),
		with(appendLine("c", f), "dependencies", []any{1}),
		appendLine("independent", f),
	)
	a := e.wait(route, ids[0])
	if a.State != jobs.StateFailed || a.ExitCode == nil || *a.ExitCode != 3 || !strings.Contains(a.Reason, "code 3") {
		t.Fatalf("parent: %+v", a)
	}
	b, c := e.wait(route, ids[1]), e.wait(route, ids[2])
	if b.State != jobs.StateBlocked || !strings.Contains(b.Reason, ids[0]) || !strings.Contains(b.Reason, "failed") {
		t.Fatalf("child: %s %q", b.State, b.Reason)
	}
	if c.State != jobs.StateBlocked || !strings.Contains(c.Reason, ids[1]) || !strings.Contains(c.Reason, ids[0]) {
		t.Fatalf("grandchild: %s %q", c.State, c.Reason)
	}
	if ind := e.wait(route, ids[3]); ind.State != jobs.StateCompleted {
		t.Fatalf("independent job: %s", ind.State)
	}
	if got := readLines(t, f); len(got) != 1 || got[0] != "independent" {
		t.Fatalf("blocked jobs ran: %v", got)
	}
	if b.Attempts != 0 || c.Attempts != 0 {
		t.Fatalf("blocked jobs were started: %d, %d", b.Attempts, c.Attempts)
	}
	// Every terminal job arrived in the conversation's mailbox with the
	// dispatcher's envelope shape.
	arr := e.arrivals(route)
	for i, want := range []string{"failed", "blocked", "blocked", "completed"} {
		env := arr[ids[i]]
		if env == nil || env["state"] != want || env["primitive"] != "task.submit" || env["future_id"] != ids[i] {
			t.Fatalf("arrival of %s: %v", ids[i], env)
		}
	}
	if code := get(arr[ids[1]], "error.code"); code != "dependency" {
		t.Fatalf("blocked arrival error: %v", arr[ids[1]]["error"])
	}

	// A job submitted later on a failed dependency is blocked at once.
	late := e.submit(route, with(appendLine("late", f), "dependencies", []any{ids[0]}))
	if j := e.wait(route, late[0]); j.State != jobs.StateBlocked || !strings.Contains(j.Reason, ids[0]) {
		t.Fatalf("late dependent: %s %q", j.State, j.Reason)
	}
}

func TestSubmitRefusals(t *testing.T) {
	e := newEnv(t, envOpts{})
	other := e.submit("r:other", sh("true"))
	e.wait("r:other", other[0])
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"cycle", map[string]any{"jobs": []any{
			with(sh("true"), "dependencies", []any{1}),
			with(sh("true"), "dependencies", []any{2}),
			with(sh("true"), "dependencies", []any{0}),
		}}, "dependency cycle"},
		{"self", map[string]any{"jobs": []any{with(sh("true"), "dependencies", []any{0})}}, "dependency cycle"},
		{"index outside batch", map[string]any{"jobs": []any{with(sh("true"), "dependencies", []any{5})}}, `"jobs[0].dependencies[0]"`},
		{"negative index", map[string]any{"jobs": []any{sh("true"), with(sh("true"), "dependencies", []any{-1})}}, `"jobs[1].dependencies[0]"`},
		{"malformed job id", map[string]any{"job": with(sh("true"), "dependencies", []any{"job_!"})}, `"job.dependencies[0]"`},
		{"index with job", map[string]any{"job": with(sh("true"), "dependencies", []any{0})}, "index into jobs[]"},
		{"future as dependency", map[string]any{"job": with(sh("true"), "dependencies", []any{"fut_aaaaaaaaaaaaaaaaaaaa"})}, "not a job id"},
		{"both delays", map[string]any{"job": with(sh("true"), "delay_ms", 5, "run_at", "2030-01-01T00:00:00Z")}, "not both"},
		{"bad run_at", map[string]any{"job": with(sh("true"), "run_at", "tomorrow")}, "RFC 3339"},
		{"timeout too long", map[string]any{"job": with(sh("true"), "timeout_ms", 7_200_000)}, "max_exec_timeout_ms"},
		{"job and jobs", map[string]any{"job": sh("true"), "jobs": []any{sh("true")}}, "not both"},
		{"neither", map[string]any{}, "give job"},
		{"unknown key in job", map[string]any{"job": with(sh("true"), "shell", true)}, `"job.shell"`},
		{"bad on_interrupt", map[string]any{"job": with(sh("true"), "on_interrupt", "retry")}, "on_interrupt"},
		{"empty jobs", map[string]any{"jobs": []any{}}, "at least 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"operation": "submit"}
			for k, v := range c.args {
				args[k] = v
			}
			out := e.call(route, args)
			msg, _ := get(out, "error.message").(string)
			if out["state"] != "failed" || !strings.Contains(msg, c.want) {
				t.Fatalf("got %v %q, want failure mentioning %q", out["state"], msg, c.want)
			}
		})
	}
	if n := e.countJobs(); n != 1 {
		t.Fatalf("refused submits left %d jobs (want only the other conversation's one)", n)
	}
}

func TestDelayAndRunAt(t *testing.T) {
	e := newEnv(t, envOpts{})
	submitted := time.Now()
	runAt := submitted.Add(700 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	ids := e.submit(route,
		with(sh("true"), "delay_ms", 400),
		with(sh("true"), "run_at", runAt),
		with(sh("true"), "run_at", "2001-01-01T00:00:00Z"), // in the past: due now
	)
	d, r, past := e.wait(route, ids[0]), e.wait(route, ids[1]), e.wait(route, ids[2])
	if lag := d.StartedAt.Sub(submitted); lag < 400*time.Millisecond || lag > 3*time.Second {
		t.Fatalf("delay_ms 400 started after %v", lag)
	}
	if lag := r.StartedAt.Sub(submitted); lag < 700*time.Millisecond || lag > 3*time.Second {
		t.Fatalf("run_at +700ms started after %v", lag)
	}
	if r.StartedAt.Before(r.RunAt) || d.StartedAt.Before(d.RunAt) {
		t.Fatalf("started before run_at: %v < %v or %v < %v", r.StartedAt, r.RunAt, d.StartedAt, d.RunAt)
	}
	if lag := past.StartedAt.Sub(submitted); lag > 2*time.Second {
		t.Fatalf("past run_at started after %v", lag)
	}
	t.Logf("delay_ms 400 → started %v after submit; run_at +700ms → %v", d.StartedAt.Sub(submitted), r.StartedAt.Sub(submitted))
}

// TestConcurrencyCap runs more jobs than slots; each child records its own
// start and end times, and no instant may see more than the cap running.
func TestConcurrencyCap(t *testing.T) {
	const capN = 3
	e := newEnv(t, envOpts{maxJobs: capN})
	dir := t.TempDir()
	var specs []map[string]any
	for i := range 12 {
		f := filepath.Join(dir, "m"+strconv.Itoa(i))
		specs = append(specs, sh(`date +%s%N > "$0"; sleep 0.2; date +%s%N >> "$0"`, f))
	}
	ids := e.submit(route, specs...)
	for _, id := range ids {
		if j := e.wait(route, id); j.State != jobs.StateCompleted {
			t.Fatalf("job %s: %s %s", id, j.State, j.Reason)
		}
	}
	type ev struct {
		at    int64
		delta int
	}
	var evs []ev
	for i := range 12 {
		lines := readLines(t, filepath.Join(dir, "m"+strconv.Itoa(i)))
		if len(lines) != 2 {
			t.Fatalf("marker %d: %v", i, lines)
		}
		s, _ := strconv.ParseInt(lines[0], 10, 64)
		en, _ := strconv.ParseInt(lines[1], 10, 64)
		evs = append(evs, ev{s, +1}, ev{en, -1})
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].at != evs[j].at {
			return evs[i].at < evs[j].at
		}
		return evs[i].delta < evs[j].delta // an end at the same instant first
	})
	cur, peak := 0, 0
	for _, v := range evs {
		cur += v.delta
		peak = max(peak, cur)
	}
	if peak > capN {
		t.Fatalf("%d jobs ran at once, cap is %d", peak, capN)
	}
	if peak < 2 {
		t.Fatalf("peak concurrency %d: independent jobs did not run concurrently", peak)
	}
	t.Logf("peak concurrency %d (cap %d)", peak, capN)
}

func TestCancelQueuedJob(t *testing.T) {
	e := newEnv(t, envOpts{})
	f := filepath.Join(t.TempDir(), "ran")
	ids := e.submit(route,
		with(appendLine("delayed", f), "delay_ms", 3_600_000),
		with(appendLine("dependent", f), "dependencies", []any{0}),
	)
	out := e.call(route, map[string]any{"operation": "cancel", "id": ids[0]})
	if get(out, "result.cancelled") != true || get(out, "result.job.state") != "cancelled" {
		t.Fatalf("cancel: %v", out)
	}
	dep := e.wait(route, ids[1])
	if dep.State != jobs.StateBlocked || !strings.Contains(dep.Reason, ids[0]+" cancelled") {
		t.Fatalf("dependent: %s %q", dep.State, dep.Reason)
	}
	// Cancelling again reports the state without pretending.
	again := e.call(route, map[string]any{"operation": "cancel", "id": ids[0]})
	if get(again, "result.cancelled") != false {
		t.Fatalf("second cancel: %v", again)
	}
	if _, err := os.Stat(f); !os.IsNotExist(err) {
		t.Fatal("a cancelled or blocked job ran")
	}
}

// blocker is a generic primitive that runs until released, to make
// running and queued futures.
func blocker(release <-chan struct{}, ran *sync.Map) *primitive.Spec {
	return &primitive.Spec{Tool: "test", Operation: "block", Risk: primitive.RiskWrite,
		Fields: []primitive.Field{{Name: "n", Type: primitive.TInteger}},
		Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in struct {
			N int `json:"n"`
		}) (any, error) {
			ran.Store(in.N, true)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return map[string]any{"n": in.N}, nil
		})}
}

func TestCancelFutures(t *testing.T) {
	release := make(chan struct{})
	var ran sync.Map
	e := newEnv(t, envOpts{maxFutures: 1, extra: []*primitive.Spec{blocker(release, &ran)}})
	spec, _ := e.reg.Lookup("test.block")
	detach := func(n int) string {
		env := e.d.Call(context.Background(), dispatchRequest(route, spec, n))
		if env.State != "pending" || env.FutureID == "" {
			t.Fatalf("detached call: %+v", env)
		}
		return env.FutureID
	}
	running := detach(1)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, ok := ran.Load(1); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("first future never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The only slot is taken, so this one stays queued.
	queued := detach(2)
	out := e.call(route, map[string]any{"operation": "cancel", "id": queued})
	if get(out, "result.cancelled") != true || get(out, "result.future.state") != "cancelled" {
		t.Fatalf("cancel queued future: %v", out)
	}
	out = e.call(route, map[string]any{"operation": "cancel", "id": running})
	if out["state"] != "blocked" || get(out, "error.code") != "not_cancellable" {
		t.Fatalf("cancel running future: %v", out)
	}
	// Another conversation cannot even see them.
	if out := e.call("r:intruder", map[string]any{"operation": "cancel", "id": running}); get(out, "error.code") != "not_found" {
		t.Fatalf("foreign cancel: %v", out)
	}
	// wait on a future returns when it completes, not by polling.
	go func() {
		time.Sleep(200 * time.Millisecond)
		close(release)
	}()
	w := e.call(route, map[string]any{"operation": "wait", "id": running, "timeout_ms": 10000})
	if get(w, "result.future.state") != "completed" || get(w, "result.timed_out") != false {
		t.Fatalf("wait future: %v", w)
	}
	time.Sleep(100 * time.Millisecond)
	if _, ok := ran.Load(2); ok {
		t.Fatal("a cancelled queued future ran")
	}
	// list shows both futures, newest first.
	l := e.call(route, map[string]any{"operation": "list"})
	items, _ := get(l, "result.items").([]any)
	if len(items) != 2 || get(items[0], "id") != queued || get(items[1], "id") != running || get(items[0], "kind") != "future" {
		t.Fatalf("list: %v", l)
	}
}

func TestConversationIsolation(t *testing.T) {
	e := newEnv(t, envOpts{})
	mine := e.submit(route, with(sh("true"), "delay_ms", 3_600_000))
	done := e.submit(route, sh("true"))
	e.wait(route, done[0])
	const intruder = "r:intruder"
	unknown := "job_aaaaaaaaaaaaaaaaaaaa"
	for _, op := range []string{"get", "status", "wait", "cancel"} {
		foreign := e.call(intruder, map[string]any{"operation": op, "id": mine[0]})
		missing := e.call(intruder, map[string]any{"operation": op, "id": unknown})
		fm, _ := get(foreign, "error.message").(string)
		mm, _ := get(missing, "error.message").(string)
		if get(foreign, "error.code") != "not_found" || strings.ReplaceAll(fm, mine[0], "ID") != strings.ReplaceAll(mm, unknown, "ID") {
			t.Fatalf("%s: foreign %v vs unknown %v", op, foreign, missing)
		}
	}
	l := e.call(intruder, map[string]any{"operation": "list"})
	if get(l, "result.count") != float64(0) {
		t.Fatalf("intruder lists %v", l)
	}
	if j := e.waitState(route, mine[0], jobs.StateQueued); j.State != "queued" {
		t.Fatal("foreign cancel changed the job")
	}
	if arr := e.arrivals(intruder); len(arr) != 0 {
		t.Fatalf("intruder received arrivals: %v", arr)
	}
	l = e.call(route, map[string]any{"operation": "list", "limit": 1})
	if get(l, "result.count") != float64(1) || get(l, "result.items.0.id") != done[0] {
		t.Fatalf("owner list (newest first, limit 1): %v", l)
	}
}

func TestWaitReturnsOnCompletionAndBound(t *testing.T) {
	e := newEnv(t, envOpts{})
	// Long enough that a stalled poll still sees it running.
	ids := e.submit(route, sh("sleep 2"), with(sh("true"), "delay_ms", 3_600_000))
	// Entered while running, wait returns at the job's next change: its end.
	e.waitState(route, ids[0], jobs.StateRunning)
	start := time.Now()
	w := e.call(route, map[string]any{"operation": "wait", "id": ids[0], "timeout_ms": 20000})
	took := time.Since(start)
	if get(w, "result.job.state") != "completed" || get(w, "result.timed_out") != false || took > 15*time.Second {
		t.Fatalf("wait: %v after %v", w, took)
	}
	start = time.Now()
	w = e.call(route, map[string]any{"operation": "wait", "id": ids[1], "timeout_ms": 300})
	took = time.Since(start)
	if get(w, "result.job.state") != "queued" || get(w, "result.timed_out") != true || took < 300*time.Millisecond || took > 5*time.Second {
		t.Fatalf("bounded wait: %v after %v", w, took)
	}
	// The bound is capped by the schema.
	w = e.call(route, map[string]any{"operation": "wait", "id": ids[1], "timeout_ms": 600000})
	if w["state"] != "failed" || !strings.Contains(get(w, "error.message").(string), "timeout_ms") {
		t.Fatalf("over-long wait accepted: %v", w)
	}
}

func TestOutputSpillsLikeExec(t *testing.T) {
	e := newEnv(t, envOpts{})
	// 5000 bytes, beyond the 1024-byte max_output_bytes of the test env.
	ids := e.submit(route, sh(`i=0; while [ $i -lt 100 ]; do echo 0123456789012345678901234567890123456789012345678; i=$((i+1)); done`))
	j := e.wait(route, ids[0])
	if j.State != jobs.StateCompleted {
		t.Fatalf("%s %s", j.State, j.Reason)
	}
	var res map[string]any
	if err := json.Unmarshal(j.Result, &res); err != nil {
		t.Fatal(err)
	}
	if get(res, "stdout.bytes") != float64(5000) || get(res, "stdout.artifact.id") == nil || len(get(res, "stdout.preview").(string)) > 1024 {
		t.Fatalf("spill: %v", res["stdout"])
	}
}

func TestTimeoutAndStartFailure(t *testing.T) {
	e := newEnv(t, envOpts{})
	ids := e.submit(route,
		with(sh("sleep 30"), "timeout_ms", 200),
		map[string]any{"command": "/nonexistent/program"},
		with(sh("true"), "cwd", "/nonexistent/dir"),
	)
	if j := e.wait(route, ids[0]); j.State != jobs.StateFailed || !strings.Contains(j.Reason, "timed out") {
		t.Fatalf("timeout: %s %q", j.State, j.Reason)
	}
	if j := e.wait(route, ids[1]); j.State != jobs.StateFailed || j.Reason == "" {
		t.Fatalf("missing program: %s %q", j.State, j.Reason)
	}
	if j := e.wait(route, ids[2]); j.State != jobs.StateFailed || !strings.Contains(j.Reason, "cwd") {
		t.Fatalf("bad cwd: %s %q", j.State, j.Reason)
	}
}

// TestRestartRecovery stops the queue while jobs run (their trees are
// killed, the rows stay running, as after a crash) and starts a new one.
func TestRestartRecovery(t *testing.T) {
	e := newEnv(t, envOpts{maxJobs: 4})
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	ids := e.submit(route,
		sh(`echo "$0" >> "$1"; sleep 1`, "requeue", runs),
		with(sh(`echo "$0" >> "$1"; sleep 1`, "block", runs), "on_interrupt", "block"),
		with(appendLine("after-block", runs), "dependencies", []any{1}),
		with(appendLine("delayed", runs), "delay_ms", 1500),
	)
	e.waitState(route, ids[0], jobs.StateRunning)
	e.waitState(route, ids[1], jobs.StateRunning)
	// Both children have written their line (the file appears with the
	// first write, shortly after the jobs are marked running).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(runs); err == nil && len(strings.Fields(string(b))) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the running jobs never wrote their lines")
		}
	}
	e.restart()

	rq := e.wait(route, ids[0])
	if rq.State != jobs.StateCompleted || rq.Attempts != 2 || rq.Interruptions != 1 {
		t.Fatalf("requeued job: %s attempts %d interruptions %d", rq.State, rq.Attempts, rq.Interruptions)
	}
	bl := e.wait(route, ids[1])
	if bl.State != jobs.StateBlocked || bl.Outcome != jobs.OutcomeUnknown || bl.Attempts != 1 {
		t.Fatalf("block job: %s outcome %q attempts %d", bl.State, bl.Outcome, bl.Attempts)
	}
	dep := e.wait(route, ids[2])
	if dep.State != jobs.StateBlocked || !strings.Contains(dep.Reason, ids[1]) {
		t.Fatalf("dependent of interrupted job: %s %q", dep.State, dep.Reason)
	}
	if d := e.wait(route, ids[3]); d.State != jobs.StateCompleted || d.Attempts != 1 {
		t.Fatalf("queued job across restart: %s attempts %d", d.State, d.Attempts)
	}
	counts := map[string]int{}
	for _, l := range readLines(t, runs) {
		counts[l]++
	}
	if counts["requeue"] != 2 || counts["block"] != 1 || counts["after-block"] != 0 || counts["delayed"] != 1 {
		t.Fatalf("runs: %v", counts)
	}
	arr := e.arrivals(route)
	if get(arr[ids[1]], "error.code") != "unknown" {
		t.Fatalf("arrival of the interrupted block job: %v", arr[ids[1]])
	}
}

func TestToolSchema(t *testing.T) {
	e := newEnv(t, envOpts{})
	sch := e.reg.ToolSchema("task")
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if _, ok := sch[k]; ok {
			t.Fatalf("task schema has top-level %s", k)
		}
	}
	b, _ := json.Marshal(sch)
	desc := e.reg.ToolDescription("task", "")
	t.Logf("task tool: schema %d bytes, description %d bytes", len(b), len(desc))
	if len(b)+len(desc) > 12000 {
		t.Fatalf("task tool takes %d bytes of the 40000-byte tools/list budget", len(b)+len(desc))
	}
	ops := map[string]bool{}
	for _, s := range e.reg.Operations("task") {
		ops[s.Operation] = true
		if !s.Inline {
			t.Errorf("task.%s is not inline", s.Operation)
		}
	}
	for _, op := range []string{"submit", "get", "status", "wait", "cancel", "list"} {
		if !ops[op] {
			t.Errorf("task.%s missing", op)
		}
	}
}

// scanMarker counts "S label" lines in a marker file.
func scanMarker(t *testing.T, file string) map[string]int {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return map[string]int{}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), "S "); ok {
			out[l]++
		}
	}
	return out
}

// TestHoldAndResume is the e-stop's use of the queue: Hold kills running
// jobs (recorded cancelled, dependents blocked) and starts nothing more
// until Resume; a hold reported by Held (e.g. persisted across a restart)
// is honoured as well.
func TestHoldAndResume(t *testing.T) {
	e := newEnv(t, envOpts{maxJobs: 2})
	f := filepath.Join(t.TempDir(), "ran")
	ids := e.submit(route,
		sh("sleep 30"),
		with(sh("true"), "dependencies", []any{0}),
	)
	e.waitState(route, ids[0], jobs.StateRunning)
	e.d.Hold(jobs.Class, dispatch.Stop{By: callpath.StoppedByEStop, Why: "cancelled by the e-stop"})
	killed := e.wait(route, ids[0])
	if killed.State != jobs.StateCancelled || killed.Reason != "cancelled by the e-stop" || killed.StoppedBy != callpath.StoppedByEStop {
		t.Fatalf("running job under hold: %s %q, stopped by %q", killed.State, killed.Reason, killed.StoppedBy)
	}
	ls, err := e.q.ListAllJobs(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if want := map[bool]string{true: callpath.StoppedByEStop}[l.ID == ids[0]]; l.StoppedBy != want {
			t.Fatalf("the jobs' list says %s was stopped by %q, want %q", l.ID, l.StoppedBy, want)
		}
	}
	if dep := e.wait(route, ids[1]); dep.State != jobs.StateBlocked {
		t.Fatalf("dependent: %s", dep.State)
	}
	later := e.submit(route, appendLine("later", f))
	time.Sleep(300 * time.Millisecond)
	if j, _ := e.q.Get(context.Background(), route, later[0]); j.State != jobs.StateQueued {
		t.Fatalf("held queue started a job: %s", j.State)
	}
	e.d.Resume(jobs.Class)
	if j := e.wait(route, later[0]); j.State != jobs.StateCompleted {
		t.Fatalf("after resume: %s", j.State)
	}

	// A hold the queue learns from Held (the persisted setting).
	var mu sync.Mutex
	held := true
	e.d.Stop()
	e.startWith(func(q *jobs.Queue) {
		q.Held = func(context.Context) (bool, error) { mu.Lock(); defer mu.Unlock(); return held, nil }
	})
	next := e.submit(route, appendLine("next", f))
	time.Sleep(300 * time.Millisecond)
	if j, _ := e.q.Get(context.Background(), route, next[0]); j.State != jobs.StateQueued {
		t.Fatalf("queue held by setting started a job: %s", j.State)
	}
	mu.Lock()
	held = false
	mu.Unlock()
	e.d.Resume(jobs.Class)
	if j := e.wait(route, next[0]); j.State != jobs.StateCompleted {
		t.Fatalf("after the setting cleared: %s", j.State)
	}
}

// A dependency that is no job of the conversation — unknown, or another
// conversation's, which reads the same — does not refuse the submit: the
// job is recorded blocked with a reason naming the dependency, its
// arrival is queued, and its own dependents are blocked in turn.
func TestMissingDependencyBlocks(t *testing.T) {
	e := newEnv(t, envOpts{})
	f := filepath.Join(t.TempDir(), "ran")
	other := e.submit("r:other", sh("true"))
	e.wait("r:other", other[0])
	e.arrivals("r:other")
	const unknown = "job_aaaaaaaaaaaaaaaaaaaa"
	out := e.call(route, map[string]any{"operation": "submit", "jobs": []any{
		with(appendLine("unknown", f), "dependencies", []any{unknown}),
		with(appendLine("foreign", f), "dependencies", []any{other[0]}),
		with(appendLine("after", f), "dependencies", []any{0}),
	}})
	if out["state"] != "completed" {
		t.Fatalf("submit: %v", out)
	}
	var ids []string
	for _, id := range get(out, "result.ids").([]any) {
		ids = append(ids, id.(string))
	}
	want := []string{
		"dependency " + unknown + " missing (no such job in this conversation)",
		"dependency " + other[0] + " missing (no such job in this conversation)",
		"dependency " + ids[0] + " blocked",
	}
	arr := e.arrivals(route)
	for i, id := range ids {
		if st, r := get(out, fmt.Sprintf("result.jobs.%d.state", i)), get(out, fmt.Sprintf("result.jobs.%d.reason", i)); st != "blocked" || r != want[i] {
			t.Fatalf("submit answer for jobs[%d]: %v %q, want blocked %q", i, st, r, want[i])
		}
		j, err := e.q.Get(context.Background(), route, id)
		if err != nil || j.State != jobs.StateBlocked || j.Reason != want[i] || j.FinishedAt == nil {
			t.Fatalf("jobs[%d]: %+v %v", i, j, err)
		}
		a := arr[id]
		if a == nil || a["state"] != "blocked" || get(a, "error.code") != "dependency" || get(a, "error.message") != want[i] ||
			get(a, "result.id") != id || get(a, "result.state") != "blocked" || get(a, "primitive") != "task.submit" {
			t.Fatalf("arrival of jobs[%d]: %v", i, a)
		}
	}
	// Only dependencies that are jobs of this conversation are recorded.
	if j, _ := e.q.Get(context.Background(), route, ids[1]); len(j.Dependencies) != 0 {
		t.Fatalf("a foreign dependency was recorded: %v", j.Dependencies)
	}
	if j, _ := e.q.Get(context.Background(), route, ids[2]); len(j.Dependencies) != 1 || j.Dependencies[0] != ids[0] {
		t.Fatalf("dependencies of jobs[2]: %v", j.Dependencies)
	}
	// The other conversation hears nothing and its job is untouched.
	if a := e.arrivals("r:other"); len(a) != 0 {
		t.Fatalf("other conversation received arrivals: %v", a)
	}
	if j := e.wait("r:other", other[0]); j.State != jobs.StateCompleted {
		t.Fatalf("foreign job: %+v", j)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(f); !os.IsNotExist(err) {
		t.Fatal("a blocked job ran")
	}
}

// A job submitted on a dependency that already failed or was cancelled is
// blocked at once, and its arrival is queued like any blocked job's.
func TestBlockedAtSubmitArrives(t *testing.T) {
	e := newEnv(t, envOpts{})
	deps := e.submit(route, sh("exit 3"), with(sh("true"), "delay_ms", 3_600_000))
	e.wait(route, deps[0])
	if out := e.call(route, map[string]any{"operation": "cancel", "id": deps[1]}); get(out, "result.cancelled") != true {
		t.Fatalf("cancel: %v", out)
	}
	e.arrivals(route)
	ids := e.submit(route,
		with(sh("true"), "dependencies", []any{deps[0]}),
		with(sh("true"), "dependencies", []any{deps[1]}),
	)
	want := []string{"dependency " + deps[0] + " failed", "dependency " + deps[1] + " cancelled"}
	arr := e.arrivals(route)
	if len(arr) != 2 {
		t.Fatalf("arrivals: %v", arr)
	}
	for i, id := range ids {
		a := arr[id]
		if a == nil || a["state"] != "blocked" || get(a, "error.code") != "dependency" || get(a, "error.message") != want[i] ||
			get(a, "future_id") != id || get(a, "result.reason") != want[i] {
			t.Fatalf("arrival of %s: %v", id, a)
		}
	}
}

// task.wait returns when the job's state changes: a queued job's start
// wakes it, long before the job ends.
func TestWaitWakesOnStart(t *testing.T) {
	e := newEnv(t, envOpts{maxJobs: 1})
	// Through the tool: a delayed job is waited on until it starts.
	// The clock starts before the submit: the delay runs from inside it.
	start := time.Now()
	ids := e.submit(route, with(sh("sleep 30"), "delay_ms", 400))
	w := e.call(route, map[string]any{"operation": "wait", "id": ids[0], "timeout_ms": 20000})
	took := time.Since(start)
	if get(w, "result.job.state") != "running" || get(w, "result.timed_out") != false || took < 400*time.Millisecond || took > 10*time.Second {
		t.Fatalf("wait on a delayed job: %v after %v", w, took)
	}
	// In process: a job queued behind the only slot wakes its waiter when
	// the slot frees and it is claimed.
	next := e.submit(route, sh("sleep 30"))
	type res struct {
		j        *jobs.Job
		timedOut bool
		err      error
	}
	done := make(chan res, 1)
	go func() {
		j, to, err := e.q.Wait(context.Background(), e.d, route, next[0], 20*time.Second)
		done <- res{j, to, err}
	}()
	time.Sleep(200 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("wait returned while the job was still queued: %+v", r)
	default:
	}
	if out := e.call(route, map[string]any{"operation": "cancel", "id": ids[0]}); get(out, "result.cancelled") != true {
		t.Fatalf("cancel: %v", out)
	}
	r := <-done
	if r.err != nil || r.timedOut || r.j.State != jobs.StateRunning {
		t.Fatalf("wait on a queued job: %+v %v %v", r.j, r.timedOut, r.err)
	}
	// Entered while running, it returns at the next change: the end.
	go func() {
		time.Sleep(100 * time.Millisecond)
		e.call(route, map[string]any{"operation": "cancel", "id": next[0]})
	}()
	j, timedOut, err := e.q.Wait(context.Background(), e.d, route, next[0], 20*time.Second)
	if err != nil || timedOut || j.State != jobs.StateCancelled {
		t.Fatalf("wait on a running job: %+v %v %v", j, timedOut, err)
	}
}

// Generic futures have their own cap (max_futures), apart from the job
// queue's (max_concurrent_jobs): a running job takes no future slot, and
// running futures take no job slot.
func TestFuturesHaveTheirOwnCap(t *testing.T) {
	release := make(chan struct{})
	var ran sync.Map
	e := newEnv(t, envOpts{maxJobs: 1, maxFutures: 2, extra: []*primitive.Spec{blocker(release, &ran)}})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	first := e.submit(route, sh("sleep 30"))
	e.waitState(route, first[0], jobs.StateRunning)
	spec, _ := e.reg.Lookup("test.block")
	futs := make([]string, 4)
	for i := range futs {
		env := e.d.Call(context.Background(), dispatchRequest(route, spec, i+1))
		if env.State != "pending" || env.FutureID == "" {
			t.Fatalf("detached call %d: %+v", i+1, env)
		}
		futs[i] = env.FutureID
	}
	started := func() int {
		n := 0
		for i := 1; i <= len(futs); i++ {
			if _, ok := ran.Load(i); ok {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(20 * time.Second)
	for started() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d futures started beside a running job, want 2", started())
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if n := started(); n != 2 {
		t.Fatalf("%d futures running with max_futures 2", n)
	}
	// The job slot is still the job's: a second job waits for it, and
	// gets it when the first ends although both future slots are taken.
	second := e.submit(route, sh("sleep 30"))
	time.Sleep(200 * time.Millisecond)
	if j, _ := e.q.Get(context.Background(), route, second[0]); j.State != jobs.StateQueued {
		t.Fatalf("second job with max_concurrent_jobs 1: %s", j.State)
	}
	e.call(route, map[string]any{"operation": "cancel", "id": first[0]})
	e.waitState(route, second[0], jobs.StateRunning)
	if n := started(); n != 2 {
		t.Fatalf("%d futures running after the job slot changed hands", n)
	}
	// Released, the first two end and the other two run.
	close(release)
	for _, id := range futs {
		w := e.call(route, map[string]any{"operation": "wait", "id": id, "timeout_ms": 20000})
		if get(w, "result.future.state") != "completed" {
			t.Fatalf("future %s: %v", id, w)
		}
	}
	if n := started(); n != 4 {
		t.Fatalf("%d of 4 futures ran", n)
	}
	e.call(route, map[string]any{"operation": "cancel", "id": second[0]})
}
