package runs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

func ref(f any, path string) map[string]any { return map[string]any{"$future": f, "$path": path} }

func scatter(c *hearthtest.Client, calls ...any) *hearthtest.Result {
	return c.Call("run", map[string]any{"operation": "scatter", "calls": calls})
}

// TestScatterSeedExample is the Hearth v0 example: fs.stat, then fs.read
// of the path the stat reported. It needs the fs tool.
func TestScatterSeedExample(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "seed")
	c.Call("machine", map[string]any{"operation": "host_info"}) // serving before a skip stops it
	if _, ok := in.App.Registry.Lookup("fs.stat"); !ok {
		t.Skip("fs.stat is not registered yet")
	}
	file := filepath.Join(in.App.Config.Roots[0], "README.md")
	if err := os.WriteFile(file, []byte("# hello from the seed example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := scatter(c,
		map[string]any{"kind": "fs.stat", "path": file},
		map[string]any{"kind": "fs.read", "path": ref(0, "result.path"), "limit": 4096},
	)
	if r.IsError || r.Get("result.state") == nil {
		t.Fatalf("scatter: %s", r.Raw)
	}
	ids := futureIDs(t, r)
	got := byID(collect(t, c, ids, r))
	read := got[ids[1]]
	if read.Env["state"] != "completed" {
		t.Fatalf("fs.read: %v (fs.stat: %v)", read.Env, got[ids[0]].Env)
	}
	b, _ := json.Marshal(read.Env["result"])
	if !strings.Contains(string(b), "hello from the seed example") {
		t.Fatalf("fs.read did not read the stat'ed file: %s", b)
	}
	if got[ids[0]].Seq >= read.Seq {
		t.Fatalf("the dependent arrived before its dependency")
	}
}

// TestScatterReferenceAcrossKinds passes a value of one primitive's result
// into another's field: host_info's hearth version becomes an exec argv
// element.
func TestScatterReferenceAcrossKinds(t *testing.T) {
	needsPOSIX(t)
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "kinds")
	r := scatter(c,
		map[string]any{"kind": "machine.host_info"},
		map[string]any{"kind": "machine.exec", "command": "echo", "args": []any{"version", ref(0, "result.hearth")}},
	)
	ids := futureIDs(t, r)
	got := byID(collect(t, c, ids, r))
	if out := hearthtest.Get(got[ids[1]].Env, "result.stdout.text"); out != "version test\n" {
		t.Fatalf("resolved argv: %v", got[ids[1]].Env)
	}
	if hearthtest.Get(got[ids[1]].Env, "result.args.1") != "test" {
		t.Fatalf("the reference must become exactly one argv element: %v", got[ids[1]].Env)
	}
}

// TestScatterDAG runs ten heterogeneous calls with index and future-id
// references. One branch fails: its dependents (direct and transitive) are
// blocked with dependency_failed, every other call completes, and results
// arrive in completion order (a slow independent call after faster later
// ones; every dependent after its dependencies).
func TestScatterDAG(t *testing.T) {
	needsPOSIX(t)
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "dag")
	x := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"xval"}, "detach": true})
	xid, _ := x.Get("future_id").(string)
	if xid == "" {
		t.Fatalf("detached exec: %s", x.Raw)
	}
	collect(t, c, []string{xid}, x)

	// The slow call waits for a file the test makes only after the
	// scatter answered: an answer that waited for its calls never comes.
	release := filepath.Join(t.TempDir(), "release")
	r := scatter(c,
		map[string]any{"kind": "machine.host_info"}, // 0
		map[string]any{"kind": "machine.exec", "command": "sh", "args": []string{"-c", "while [ ! -e \"$0\" ]; do sleep 0.05; done; sleep 0.6; echo slow", release}}, // 1
		map[string]any{"kind": "machine.exec", "command": "echo", "args": []any{ref(0, "result.hearth")}},                                                            // 2
		map[string]any{"kind": "machine.exec", "command": "no-such-program-hearth"},                                                                                  // 3 fails
		map[string]any{"kind": "machine.exec", "command": "echo", "args": []string{"after-3"}, "dependencies": []any{3}},                                             // 4 blocked
		map[string]any{"kind": "artifact.list", "dependencies": []any{4}},                                                                                            // 5 blocked (transitively)
		map[string]any{"kind": "task.get", "id": xid, "dependencies": []any{xid}},                                                                                    // 6 id dependency
		map[string]any{"kind": "machine.exec", "command": "printf", "args": []any{"%s", ref(xid, "result.stdout.text")}},                                             // 7 id reference
		map[string]any{"kind": "run.list", "dependencies": []any{2, 6}},                                                                                              // 8
		map[string]any{"kind": "machine.process_list", "dependencies": []any{8, 7}},                                                                                  // 9
	)
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Call 3 fails at once, so by the time the scatter answers it may have
	// failed (and 4, 5 been blocked by it): then the answer is partial,
	// naming only those; otherwise completed, the failures arriving later.
	switch r.State() {
	case "completed":
		if r.IsError {
			t.Fatalf("scatter answer: %s", r.Raw)
		}
	case "partial":
		failed, _ := r.Get("error.details.failed_indexes").([]any)
		if !r.IsError || r.Get("error.code") != "some_failed" || len(failed) == 0 {
			t.Fatalf("scatter answer: %s", r.Raw)
		}
		for _, i := range failed {
			if n, _ := i.(float64); n < 3 || n > 5 {
				t.Fatalf("scatter answer names calls[%v] failed: %s", i, r.Raw)
			}
		}
	default:
		t.Fatalf("scatter answer: %s", r.Raw)
	}
	if r.Get("result.state") != "pending" {
		t.Fatalf("scatter answer: %s", r.Raw)
	}
	ids := futureIDs(t, r)
	kinds := []string{"machine.host_info", "machine.exec", "machine.exec", "machine.exec", "machine.exec", "artifact.list", "task.get", "machine.exec", "run.list", "machine.process_list"}
	for i, f := range r.Get("result.futures").([]any) {
		if hearthtest.Get(f, "kind") != kinds[i] {
			t.Fatalf("futures[%d].kind = %v", i, hearthtest.Get(f, "kind"))
		}
	}
	arr := collect(t, c, ids, r)
	got := byID(arr)
	for i := 1; i < len(arr); i++ {
		if arr[i].Seq <= arr[i-1].Seq {
			t.Fatalf("arrivals not in seq order: %v", arr)
		}
	}
	state := func(i int) string { s, _ := got[ids[i]].Env["state"].(string); return s }
	for _, i := range []int{0, 1, 2, 6, 7, 8, 9} {
		if state(i) != "completed" {
			t.Errorf("call %d: %v", i, got[ids[i]].Env)
		}
	}
	if state(3) != "failed" {
		t.Errorf("call 3 must fail: %v", got[ids[3]].Env)
	}
	for _, i := range []int{4, 5} {
		if state(i) != "blocked" || hearthtest.Get(got[ids[i]].Env, "error.code") != "dependency_failed" {
			t.Errorf("call %d must be blocked by its failed dependency: %v", i, got[ids[i]].Env)
		}
	}
	if d := hearthtest.Get(got[ids[4]].Env, "error.details.dependency"); d != ids[3] {
		t.Errorf("the block must name the failed dependency %s: %v", ids[3], d)
	}
	if d := hearthtest.Get(got[ids[5]].Env, "error.details.dependency"); d != ids[4] {
		t.Errorf("the transitive block must name %s: %v", ids[4], d)
	}
	if out := hearthtest.Get(got[ids[7]].Env, "result.stdout.text"); out != "xval\n" {
		t.Errorf("future-id reference: %v", out)
	}
	if out := hearthtest.Get(got[ids[2]].Env, "result.stdout.text"); out != "test\n" {
		t.Errorf("index reference: %v", out)
	}
	if hearthtest.Get(got[ids[6]].Env, "result.future.id") != xid {
		t.Errorf("task.get kind: %v", got[ids[6]].Env)
	}
	// Completion order: the slow independent call after the fast ones, every
	// dependent after each of its dependencies.
	for _, fast := range []int{0, 2, 3} {
		if got[ids[1]].Seq < got[ids[fast]].Seq {
			t.Errorf("slow call 1 arrived before call %d", fast)
		}
	}
	for dependent, deps := range map[int][]int{2: {0}, 4: {3}, 5: {4}, 8: {2, 6}, 9: {7, 8}} {
		for _, d := range deps {
			if got[ids[dependent]].Seq < got[ids[d]].Seq {
				t.Errorf("call %d arrived before its dependency %d", dependent, d)
			}
		}
	}
	// The scatter is in the event log of this conversation.
	ev := c.Call("run", map[string]any{"operation": "events", "entity_id": r.Get("result.scatter_id")})
	if hearthtest.Get(ev.Env, "result.events.0.kind") != "scatter.submitted" {
		t.Errorf("events: %s", ev.Raw)
	}
}

// TestScatterRejectsNamingTheProblem: the kind is a closed enum (no unknown
// kind, no tool name, no excluded primitive), and each item is validated
// strictly against its own primitive.
func TestScatterRejectsNamingTheProblem(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "reject")
	cases := []struct {
		name  string
		calls []any
		want  []string
	}{
		{"unknown kind", []any{map[string]any{"kind": "fs.explode"}}, []string{"calls[0].kind", `"fs.explode"`}},
		{"tool name as kind", []any{map[string]any{"kind": "machine"}}, []string{"calls[0].kind", `"machine"`}},
		{"process_kill", []any{map[string]any{"kind": "machine.process_kill"}}, []string{"calls[0].kind", `"machine.process_kill"`}},
		// A key no kind accepts is named first (the advertised item schema
		// is closed over the union of the kinds' fields).
		{"process_kill with pid", []any{map[string]any{"kind": "machine.process_kill", "pid": 1}}, []string{"calls[0].pid", "unknown key"}},
		{"scatter itself", []any{map[string]any{"kind": "run.scatter"}}, []string{"calls[0].kind", `"run.scatter"`}},
		{"batch", []any{map[string]any{"kind": "machine.batch"}}, []string{"calls[0].kind", `"machine.batch"`}},
		{"missing kind", []any{map[string]any{"command": "echo"}}, []string{"calls[0].kind", "required"}},
		{"extra field", []any{map[string]any{"kind": "machine.host_info"}, map[string]any{"kind": "machine.exec", "command": "echo", "bogus": 1}}, []string{"calls[1].bogus"}},
		{"field of another kind", []any{map[string]any{"kind": "machine.host_info", "command": "echo"}}, []string{"calls[0].command", "machine.host_info"}},
		{"wrong type", []any{map[string]any{"kind": "machine.exec", "command": 5}}, []string{"calls[0].command", "must be a string"}},
		{"wrong nested type", []any{map[string]any{"kind": "machine.exec", "command": "echo", "args": []any{"a", 2}}}, []string{"calls[0].args[1]", "must be a string"}},
		{"missing required", []any{map[string]any{"kind": "machine.exec"}}, []string{"calls[0].command", "required"}},
		{"index out of range", []any{map[string]any{"kind": "machine.exec", "command": ref(3, "result.x")}}, []string{"calls[0].command.$future", "index 3"}},
		{"self dependency", []any{map[string]any{"kind": "machine.host_info", "dependencies": []any{0}}}, []string{"calls[0].dependencies[0]", "itself"}},
		{"cycle", []any{
			map[string]any{"kind": "machine.host_info", "dependencies": []any{1}},
			map[string]any{"kind": "machine.host_info", "dependencies": []any{0}},
		}, []string{"cycle"}},
		{"malformed reference", []any{map[string]any{"kind": "machine.host_info"}, map[string]any{"kind": "machine.exec", "command": map[string]any{"$future": 0}}}, []string{"calls[1].command", "$path"}},
		{"reference with extra key", []any{map[string]any{"kind": "machine.host_info"}, map[string]any{"kind": "machine.exec", "command": map[string]any{"$future": 0, "$path": "result.x", "x": 1}}}, []string{"calls[1].command", "exactly"}},
		{"bad dependency id", []any{map[string]any{"kind": "machine.host_info", "dependencies": []any{"job_x"}}}, []string{"calls[0].dependencies[0]", `"job_x"`}},
		{"empty", []any{}, []string{"calls", "at least 1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.Call("run", map[string]any{"operation": "scatter", "calls": tc.calls})
			if !r.IsError || r.Get("error.code") != "invalid_input" {
				t.Fatalf("want invalid_input, got %s", r.Raw)
			}
			msg, _ := r.Get("error.message").(string)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
	// Nothing was submitted by any rejected scatter.
	if n := dispatchtest.Count(t, in.App.DB); n != 0 {
		t.Fatalf("rejected scatters left %d futures", n)
	}
	// The advertised kinds are exactly the allowed, registered ones.
	kinds := in.App.Runs.Kinds()
	for _, k := range []string{"machine.process_kill", "machine.batch", "run.scatter", "machine.estop", "task.submit", "task.cancel", "recipe.create", "machine"} {
		if slices.Contains(kinds, k) {
			t.Errorf("kind %s must not be offered", k)
		}
	}
	for _, k := range []string{"machine.host_info", "machine.exec", "machine.process_list", "artifact.read", "recipe.run", "task.get", "task.status", "task.list", "run.get", "run.list", "run.events"} {
		if !slices.Contains(kinds, k) {
			t.Errorf("kind %s missing from %v", k, kinds)
		}
	}
}

// TestScatterBlockedReferences: a dependency of another conversation or an
// unknown one blocks the call at submit; a missing $path blocks it when it
// would run; a value of the wrong type fails it naming the field.
func TestScatterBlockedReferences(t *testing.T) {
	needsPOSIX(t)
	in := hearthtest.Start(t, trusted)
	a := hearthtest.Connect(t, in.URL, "conv-a")
	b := hearthtest.Connect(t, in.URL, "conv-b")
	x := a.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"a"}, "detach": true})
	xid := x.Get("future_id").(string)
	collect(t, a, []string{xid}, x)

	r := scatter(b,
		map[string]any{"kind": "machine.exec", "command": "echo", "args": []any{ref(xid, "result.stdout.text")}},
		map[string]any{"kind": "machine.host_info", "dependencies": []any{"fut_aaaaaaaaaaaaaaaaaaaa"}},
		map[string]any{"kind": "machine.host_info"},
		map[string]any{"kind": "machine.exec", "command": "echo", "args": []any{ref(2, "result.no_such_field")}},
		map[string]any{"kind": "machine.exec", "command": ref(2, "result.cpus")},
	)
	if r.Get("result.futures.0.state") != "blocked" || r.Get("result.futures.1.state") != "blocked" {
		t.Fatalf("unknown and foreign dependencies must be blocked at submit: %s", r.Raw)
	}
	// Calls 0 and 1 failed at submit (3 and 4 may have failed too by the
	// time the answer is written; 2 completes): the scatter answers partial
	// and names exactly the failed ones, with every call's future beside
	// the error.
	answer, _ := r.Get("error.message").(string)
	failedIdx := fmt.Sprint(r.Get("error.details.failed_indexes"))
	if r.State() != "partial" || !r.IsError || r.Get("error.code") != "some_failed" ||
		!strings.HasPrefix(failedIdx, "[0 1") || strings.Contains(failedIdx, "2") ||
		!strings.Contains(answer, "calls[0] (machine.exec) blocked") || !strings.Contains(answer, "calls[1] (machine.host_info) blocked") ||
		strings.Contains(answer, "calls[2]") || r.Get("result.futures.2.future_id") == nil {
		t.Fatalf("a scatter with some failed calls must answer partial naming them: %s", r.Raw)
	}
	ids := futureIDs(t, r)
	got := byID(collect(t, b, ids, r))
	for _, i := range []int{0, 1} {
		if hearthtest.Get(got[ids[i]].Env, "error.code") != "unknown_dependency" {
			t.Errorf("call %d: %v", i, got[ids[i]].Env)
		}
	}
	if hearthtest.Get(got[ids[3]].Env, "state") != "blocked" || hearthtest.Get(got[ids[3]].Env, "error.code") != "missing_path" ||
		!strings.Contains(hearthtest.Get(got[ids[3]].Env, "error.message").(string), "result.no_such_field") {
		t.Errorf("missing path: %v", got[ids[3]].Env)
	}
	msg, _ := hearthtest.Get(got[ids[4]].Env, "error.message").(string)
	if hearthtest.Get(got[ids[4]].Env, "state") != "failed" || !strings.Contains(msg, `"command"`) || !strings.Contains(msg, "must be a string") {
		t.Errorf("a resolved value of the wrong type must fail naming the field: %v", got[ids[4]].Env)
	}
	// Conversation a never sees b's futures, and b cannot read a's.
	f, err := in.App.Dispatcher.GetFuture(context.Background(), mcpRoute("conv-b"), ids[2])
	if err != nil || f.State != "completed" {
		t.Errorf("b's own future: %v %v", f, err)
	}
}

// TestScatterTaskCancelReleasesDependents: a queued dependency cancelled
// with task.cancel blocks its dependents instead of leaving them waiting.
func TestScatterTaskCancelReleasesDependents(t *testing.T) {
	needsPOSIX(t)
	in := hearthtest.Start(t, func(c *config.Config) { trusted(c); c.MaxConcurrentFutures = 1 })
	c := hearthtest.Connect(t, in.URL, "cancel")
	r := scatter(c,
		map[string]any{"kind": "machine.exec", "command": "sleep", "args": []string{"1"}},
		map[string]any{"kind": "machine.exec", "command": "echo", "args": []string{"queued"}},
		map[string]any{"kind": "machine.exec", "command": "echo", "args": []any{ref(1, "result.stdout.text")}},
	)
	ids := futureIDs(t, r)
	// With one slot, one of the first two runs and the other is queued.
	queued := ""
	deadline := time.Now().Add(10 * time.Second)
	for queued == "" && time.Now().Before(deadline) {
		for _, id := range ids[:2] {
			f, err := in.App.Dispatcher.GetFuture(context.Background(), mcpRoute("cancel"), id)
			if err == nil && f.State == "queued" {
				other := ids[0]
				if id == ids[0] {
					other = ids[1]
				}
				if g, _ := in.App.Dispatcher.GetFuture(context.Background(), mcpRoute("cancel"), other); g.State == "running" {
					queued = id
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if queued != ids[1] {
		t.Skipf("call 1 was not the queued one (%q); the slot went the other way", queued)
	}
	cr := c.Call("task", map[string]any{"operation": "cancel", "id": ids[1]})
	if cr.Get("result.cancelled") != true {
		t.Fatalf("cancel: %s", cr.Raw)
	}
	got := byID(collect(t, c, []string{ids[0], ids[2]}, r, cr))
	if hearthtest.Get(got[ids[2]].Env, "error.code") != "dependency_failed" || !strings.Contains(hearthtest.Get(got[ids[2]].Env, "error.message").(string), "cancelled") {
		t.Fatalf("dependent of a cancelled call: %v", got[ids[2]].Env)
	}
}

// TestScatterItemsNeedPermits: in ask mode each exec item is parked for
// the operator like any exec call; a dependent's permit shows the input it
// will really run (its reference resolved), and approval runs exactly that.
func TestScatterItemsNeedPermits(t *testing.T) {
	needsPOSIX(t)
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "ask")
	r := scatter(c,
		map[string]any{"kind": "machine.exec", "command": "echo", "args": []string{"first"}},
		map[string]any{"kind": "machine.exec", "command": "printf", "args": []any{"got %s", ref(0, "result.stdout.text")}},
		map[string]any{"kind": "machine.host_info", "dependencies": []any{1}},
	)
	ids := futureIDs(t, r)
	ctx := t.Context()
	var inputs []string
	seen := []*hearthtest.Result{r}
	deadline := time.Now().Add(30 * time.Second)
	for len(inputs) < 2 && time.Now().Before(deadline) {
		ps, err := in.App.Operator.Permits(ctx, "pending")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			inputs = append(inputs, p.Input)
			if err := in.App.Operator.Approve(ctx, p.ID, "tester", nil); err != nil {
				t.Fatal(err)
			}
		}
		seen = append(seen, c.Call("artifact", map[string]any{"operation": "list"}))
		time.Sleep(10 * time.Millisecond)
	}
	if len(inputs) != 2 || strings.Contains(inputs[1], "$future") || !strings.Contains(inputs[1], `first\n`) {
		t.Fatalf("permits: %q", inputs)
	}
	got := byID(collect(t, c, ids, seen...))
	if out := hearthtest.Get(got[ids[1]].Env, "result.stdout.text"); out != "got first\n" {
		t.Fatalf("approved dependent: %v", got[ids[1]].Env)
	}
	if hearthtest.Get(got[ids[2]].Env, "state") != "completed" {
		t.Fatalf("read-only item after the approved ones: %v", got[ids[2]].Env)
	}
}

// TestScatterOfAFastFailureIsNotRefused: a call that runs and fails at
// once (an artifact that does not exist) was not refused at submission,
// however fast it failed, so the scatter never answers all_refused for it;
// only gate refusals (the e-stop test in internal/govern) do.
func TestScatterOfAFastFailureIsNotRefused(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "fast-failure")
	route := mcpserver.Route(map[string]any{"hearth/conversation": c.Conversation})
	// The worst case, made certain: every call has finished before the
	// scatter reads their states.
	in.App.Runs.SetAfterSubmitForTest(func(ids []string) {
		for _, id := range ids {
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				f, err := in.App.Dispatcher.GetFuture(context.Background(), route, id)
				if err == nil && dispatch.Settled(f.State) {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("future %s never settled: %+v %v", id, f, err)
					return
				}
			}
		}
	})
	for i := range 3 {
		r := c.Call("run", map[string]any{"operation": "scatter", "calls": []any{
			map[string]any{"kind": "artifact.metadata", "id": "art_aaaaaaaaaaaaaaaaaaaa"},
		}})
		// It ran and failed: the scatter says failed (every call did), not
		// blocked as refused.
		if r.State() != "failed" || r.Get("error.code") != "all_failed" {
			t.Fatalf("round %d: a call that ran and failed was reported refused: %s", i, r.Raw)
		}
		env := c.WaitArrival(futureIDs(t, r)[0], r)
		if hearthtest.Get(env, "envelope.error.code") != "not_found" {
			t.Fatalf("round %d: arrival %v", i, env)
		}
	}
}
