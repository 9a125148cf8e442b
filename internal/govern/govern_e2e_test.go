//go:build !windows

package govern_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/ledger/ledgertest"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/recipes"
)

var bg = context.Background()

// sample builds a minimal valid value for a field from its spec, so every
// primitive in the registry can be called without a hand-written list.
func sample(f *primitive.Field) any {
	switch f.Type {
	case primitive.TString:
		if len(f.Enum) > 0 {
			return f.Enum[0]
		}
		return "x"
	case primitive.TInteger, primitive.TNumber:
		if f.Min != nil {
			return *f.Min
		}
		return 1
	case primitive.TBoolean:
		return false
	case primitive.TArray:
		n := 0
		if f.Min != nil {
			n = int(*f.Min)
		}
		out := []any{}
		for i := 0; i < n; i++ {
			if f.Items != nil {
				out = append(out, sample(f.Items))
			} else {
				out = append(out, "x")
			}
		}
		return out
	case primitive.TObject:
		m := map[string]any{}
		for i := range f.Fields {
			if f.Fields[i].Required {
				m[f.Fields[i].Name] = sample(&f.Fields[i])
			}
		}
		return m
	}
	return "x"
}

// sampleOverrides are the fields of primitives whose required input is
// "one of" several fields or is checked beyond its schema, so that
// required fields alone would be refused before the gate.
var sampleOverrides = map[string]map[string]any{
	"ui.open":   {"url": "https://example.org/"},
	"ui.window": {"hwnd": 1, "window_action": "focus"},
}

func sampleArgs(s *primitive.Spec) map[string]any {
	args := map[string]any{"operation": s.Operation}
	for k, v := range sampleOverrides[s.Name()] {
		args[k] = v
	}
	for i := range s.Fields {
		if s.Fields[i].Required {
			args[s.Fields[i].Name] = sample(&s.Fields[i])
		}
	}
	return args
}

// countRuns wraps every primitive's Run with a counter.
func countRuns(in *hearthtest.Instance) map[string]*atomic.Int64 {
	counts := map[string]*atomic.Int64{}
	for _, s := range in.App.Registry.All() {
		n := &atomic.Int64{}
		counts[s.Name()] = n
		run := s.Run
		s.Run = func(ctx context.Context, c *primitive.Call, raw json.RawMessage) (any, error) {
			n.Add(1)
			return run(ctx, c, raw)
		}
		// A quick attempt that answers is the primitive running (one that
		// declines leaves it to Run).
		if quick := s.Quick; quick != nil {
			s.Quick = func(ctx context.Context, c *primitive.Call, raw json.RawMessage) (any, bool, error) {
				res, done, err := quick(ctx, c, raw)
				if done {
					n.Add(1)
				}
				return res, done, err
			}
		}
	}
	return counts
}

func TestEStopBlocksEveryNonReadPrimitive(t *testing.T) {
	hearthtest.FakeOpener(t)
	in := hearthtest.Start(t, hearthtest.Trusted)
	counts := countRuns(in)
	c := hearthtest.Connect(t, in.URL, "estop")
	marker := filepath.Join(in.Home, "touched")
	r := c.Call("machine", map[string]any{"operation": "estop", "reason": "test stop"})
	if r.State() != "completed" {
		t.Fatalf("estop: %s", r.Raw)
	}
	// A real side effect is refused.
	r = c.Call("machine", map[string]any{"operation": "exec", "command": "touch", "args": []string{marker}})
	if r.State() != "blocked" || r.Get("error.code") != "estop" {
		t.Fatalf("exec under e-stop: %s", r.Raw)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("exec ran under e-stop")
	}
	checked := 0
	for _, s := range in.App.Registry.All() {
		if s.Risk == primitive.RiskRead || s.Risk == primitive.RiskControl {
			continue
		}
		args := sampleArgs(s)
		before := counts[s.Name()].Load()
		r := c.Call(s.Tool, args)
		if r.State() != "blocked" || r.Get("error.code") != "estop" {
			t.Errorf("%s under e-stop: %s", s.Name(), r.Raw)
		}
		if counts[s.Name()].Load() != before {
			t.Errorf("%s ran under e-stop", s.Name())
		}
		checked++
	}
	if checked < 3 {
		t.Fatalf("only %d non-read primitives checked", checked)
	}
	// Every non-read scatter kind is refused item by item, and nothing runs:
	// the scatter itself is a read, its calls are not.
	kinds := 0
	for _, kind := range in.App.Runs.Kinds() {
		spec, _ := in.App.Registry.Lookup(kind)
		if spec == nil || spec.Risk == primitive.RiskRead {
			continue
		}
		item := sampleArgs(spec)
		delete(item, "operation")
		item["kind"] = kind
		if kind == "machine.exec" {
			item["command"], item["args"] = "touch", []string{marker}
		}
		before := counts[kind].Load()
		r := c.Call("run", map[string]any{"operation": "scatter", "calls": []any{item}})
		fid, _ := r.Get("error.details.futures.0.future_id").(string)
		if r.State() != "blocked" || r.Get("error.details.futures.0.state") != "blocked" || fid == "" {
			t.Errorf("scatter of %s under e-stop: %s", kind, r.Raw)
			continue
		}
		if env := c.WaitArrival(fid, r); hearthtest.Get(env, "envelope.error.code") != "estop" {
			t.Errorf("scatter item %s under e-stop arrived as %v", kind, env)
		}
		if counts[kind].Load() != before {
			t.Errorf("scatter item %s ran under e-stop", kind)
		}
		kinds++
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a scattered exec ran under e-stop")
	}
	if kinds < 4 {
		t.Fatalf("only %d non-read scatter kinds checked", kinds)
	}
	// Reads still work.
	if r := c.Call("machine", map[string]any{"operation": "host_info"}); r.State() != "completed" || r.Get("result.estop") != true {
		t.Fatalf("host_info under e-stop: %s", r.Raw)
	}
	// The model cannot reset; the operator can. The queue stays held.
	if err := in.App.Operator.Reset(bg, "alice"); err != nil {
		t.Fatal(err)
	}
	if held, _ := in.App.Gov.QueueHeld(bg); !held {
		t.Fatal("reset must not resume the queue")
	}
	r = c.Call("machine", map[string]any{"operation": "exec", "command": "touch", "args": []string{marker}})
	if r.State() != "completed" {
		t.Fatalf("exec after reset: %s", r.Raw)
	}
	if err := in.App.Operator.ResumeQueue(bg, "alice"); err != nil {
		t.Fatal(err)
	}
	rep, err := ledger.VerifyDB(bg, in.App.DB)
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	t.Logf("%d non-read primitives and %d scatter kinds refused; ledger verifies (%d entries)", checked, kinds, rep.Entries)
}

func TestEStopKillsRunningWork(t *testing.T) {
	// The shipped budget: the long exec below is a running future at once.
	in := hearthtest.Start(t, func(c *config.Config) { hearthtest.Trusted(c); hearthtest.ProductionBudget(c) })
	c := hearthtest.Connect(t, in.URL, "kill")
	pidfile := filepath.Join(t.TempDir(), "pids")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", treeScript, "sh", pidfile}})
	if r.State() != "pending" {
		t.Fatalf("%s", r.Raw)
	}
	pids := treePids(t, pidfile)
	for _, pid := range pids {
		if !processAlive(pid) {
			t.Fatalf("process %d of the tree is not running before the e-stop", pid)
		}
	}
	start := time.Now()
	if err := in.App.Operator.EStop(bg, "bob", "panic"); err != nil {
		t.Fatal(err)
	}
	assertTreeDies(t, pids)
	arr := c.WaitArrival(r.Get("future_id").(string), r)
	if hearthtest.Get(arr, "envelope.state") != "cancelled" || time.Since(start) > 10*time.Second {
		t.Fatalf("running exec not cancelled by e-stop: %v", arr)
	}
}

// TestEStopRecordsStoppedNeverUnknown: an e-stop that stops a recipe
// mid-step leaves no UNKNOWN. Hearth killed the running step itself, so
// its end is known: the journal records it as stopped, by the e-stop, and
// after the reset the conversation's next write runs (no gate waits for
// the operator to say what happened). The recipe's answer traces the
// steps that ran.
func TestEStopRecordsStoppedNeverUnknown(t *testing.T) {
	in := hearthtest.Start(t, func(c *config.Config) { hearthtest.Trusted(c); hearthtest.ProductionBudget(c) })
	c := hearthtest.Connect(t, in.URL, "recipe-stop")
	pidfile := filepath.Join(t.TempDir(), "pids")
	r := c.Call("recipe", map[string]any{"operation": "create", "name": "long", "steps": []any{
		map[string]any{"primitive": "machine.exec", "input": map[string]any{"command": "true"}},
		map[string]any{"primitive": "machine.exec", "input": map[string]any{"command": "sh", "args": []string{"-c", treeScript, "sh", pidfile}}},
		map[string]any{"primitive": "machine.exec", "input": map[string]any{"command": "true"}}}})
	if r.State() != "completed" {
		t.Fatalf("create: %s", r.Raw)
	}
	r, err := c.TryCall("recipe", map[string]any{"operation": "run", "name": "long"}, map[string]any{"hearth/command_id": "cmd-long"})
	if err != nil || r.State() != "pending" {
		t.Fatalf("run: %v %s", err, r.Raw)
	}
	pids := treePids(t, pidfile)
	if err := in.App.Operator.EStop(bg, "bob", "stop the recipe"); err != nil {
		t.Fatal(err)
	}
	assertTreeDies(t, pids)
	arr := c.WaitArrival(r.Get("future_id").(string), r)
	if hearthtest.Get(arr, "envelope.state") != "cancelled" {
		t.Fatalf("recipe not cancelled by the e-stop: %v", arr)
	}
	// Its answer says how far it got: the steps that ran, and how.
	if steps, _ := hearthtest.Get(arr, "envelope.error.details.steps").([]any); len(steps) != 2 ||
		hearthtest.Get(arr, "envelope.error.details.steps.0.state") != "completed" ||
		hearthtest.Get(arr, "envelope.error.details.steps.1.state") != "cancelled" {
		t.Fatalf("the stopped recipe's answer does not trace its steps: %v", arr)
	}
	us, err := in.App.Gov.Unknowns(bg, "")
	if err != nil {
		t.Fatal(err)
	}
	var open []string
	for _, u := range us {
		open = append(open, u.CommandID)
	}
	if len(open) != 0 {
		t.Fatalf("open UNKNOWNs after an e-stop mid-recipe: %v (Hearth stopped the step itself: want none)", open)
	}
	if o := ledgertest.Outcome(t, in.App.DB, "cmd-long/step1"); o["outcome"] != "stopped" || o["stopped_by"] != "estop" {
		t.Fatalf("the stopped step's outcome is journaled as %v, want stopped by the e-stop", o)
	}
	if err := in.App.Operator.Reset(bg, "bob"); err != nil {
		t.Fatal(err)
	}
	if r := c.Final("machine", map[string]any{"operation": "exec", "command": "true"}); r.State() != "completed" {
		t.Fatalf("after the reset the chat's next call: %s", r.Raw)
	}
}

// TestShutdownRecordsStoppedNeverUnknown: a call still running when
// Hearth closes (a quit, a restart, an update's hand-over) is stopped by
// Hearth itself, which records it as stopped, by the shutdown, before it
// closes its database: the next start finds no UNKNOWN to settle, and the
// conversation's writes run.
func TestShutdownRecordsStoppedNeverUnknown(t *testing.T) {
	home := t.TempDir()
	in := hearthtest.StartHome(t, home, func(c *config.Config) { hearthtest.Trusted(c); hearthtest.ProductionBudget(c) })
	c := hearthtest.Connect(t, in.URL, "shutdown-stop")
	r, err := c.TryCall("machine", map[string]any{"operation": "exec", "command": "sleep", "args": []string{"30"}}, map[string]any{"hearth/command_id": "cmd-sleep"})
	if err != nil || r.State() != "pending" {
		t.Fatalf("exec: %v %s", err, r.Raw)
	}
	in.Stop()
	in2 := hearthtest.StartHome(t, home, func(c *config.Config) { hearthtest.Trusted(c); hearthtest.ProductionBudget(c) })
	us, err := in2.App.Gov.Unknowns(bg, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 0 {
		t.Fatalf("UNKNOWNs after a shutdown stopped a call: %+v (Hearth stopped it itself: want none)", us)
	}
	if o := ledgertest.Outcome(t, in2.App.DB, "cmd-sleep"); o["outcome"] != "stopped" || o["stopped_by"] != "shutdown" {
		t.Fatalf("the call a shutdown stopped is journaled as %v, want stopped by the shutdown", o)
	}
	c2 := hearthtest.Connect(t, in2.URL, "shutdown-stop")
	if r := c2.Final("fs", map[string]any{"operation": "write", "path": filepath.Join(in2.Root, "after.txt"), "data": "x"}); r.State() != "completed" {
		t.Fatalf("after the restart the chat's next write: %s", r.Raw)
	}
}

// operatorKinds are the ledger kinds only an operator action writes.
var operatorKinds = []string{"reset", "policy_change", "queue_resume", "rule_added", "rule_removed", "permit_approved", "permit_denied"}

// govState is everything an operator action changes.
type govState struct {
	EStop     govern.EStopState
	Mode      string
	QueueHeld bool
	Rules     int
	Permits   map[string]string // id -> state
	Operator  map[string]int    // ledger entries per operator kind
}

func readGovState(t *testing.T, in *hearthtest.Instance) govState {
	t.Helper()
	st, err := in.App.Gov.Status(bg)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := in.App.Gov.Rules(bg)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := in.App.Operator.Permits(bg, "")
	if err != nil {
		t.Fatal(err)
	}
	g := govState{EStop: st.EStop, Mode: st.Mode, QueueHeld: st.QueueHeld, Rules: len(rules), Permits: map[string]string{}, Operator: map[string]int{}}
	for _, p := range ps {
		g.Permits[p.ID] = p.State
	}
	for _, k := range operatorKinds {
		g.Operator[k] = ledgertest.Count(t, in.App.DB, k)
	}
	return g
}

// assertOperatorStateKept fails when anything but new pending permits
// differs between before and after.
func assertOperatorStateKept(t *testing.T, before, after govState) {
	t.Helper()
	if !reflect.DeepEqual(after.EStop, before.EStop) {
		t.Errorf("a tool call changed the e-stop latch: %+v -> %+v", before.EStop, after.EStop)
	}
	if after.Mode != before.Mode {
		t.Errorf("a tool call changed the policy: %s -> %s", before.Mode, after.Mode)
	}
	if after.QueueHeld != before.QueueHeld {
		t.Errorf("a tool call changed the queue hold: %v -> %v", before.QueueHeld, after.QueueHeld)
	}
	if after.Rules != before.Rules {
		t.Errorf("a tool call changed the allow-rules: %d -> %d", before.Rules, after.Rules)
	}
	for id, st := range after.Permits {
		if was, ok := before.Permits[id]; ok && was != st {
			t.Errorf("permit %s was decided by a tool call: %s -> %s", id, was, st)
		} else if !ok && st != "pending" {
			t.Errorf("permit %s requested by a tool call is %s, not pending", id, st)
		}
	}
	for _, k := range operatorKinds {
		if after.Operator[k] != before.Operator[k] {
			t.Errorf("a tool call journaled %d %s entries", after.Operator[k]-before.Operator[k], k)
		}
	}
}

// operatorMeta looks like an operator's instructions: a client may send
// any _meta, and none of it may reach an operator action.
func operatorMeta(conv string, permitID any) map[string]any {
	return map[string]any{"hearth/conversation": conv, "hearth/operator": "alice", "operator": "alice",
		"hearth/approve": permitID, "hearth/permit_id": permitID, "hearth/reset": true, "hearth/resume_queue": true,
		"hearth/policy": "trusted", "hearth/rule": map[string]any{"program": "sh", "cwd_root": "/"}}
}

// withOperatorFields adds operator-looking fields to a call's arguments;
// strict validation must refuse them before anything runs.
func withOperatorFields(args map[string]any, permitID any) map[string]any {
	out := maps.Clone(args)
	out["operator"], out["approve"], out["permit_id"], out["reset"] = "alice", permitID, permitID, true
	return out
}

// TestNoToolReachesOperatorActions calls every primitive in the registry —
// and every scatter kind through run.scatter and every recipe step
// primitive through recipe.run — with operator-looking _meta while a
// permit is pending, the queue is held and the e-stop is not latched, so
// each call really runs (counted) rather than being refused at the gate.
// None of them may reset, latch, approve or deny, add a rule, change the
// policy or resume the queue. A second pass under ask (exec parked for
// permits) and a third with the e-stop latched (read primitives still run)
// check the same.
func TestNoToolReachesOperatorActions(t *testing.T) {
	hearthtest.FakeOpener(t)
	in := hearthtest.Start(t, hearthtest.Trusted)
	counts := countRuns(in)
	c := hearthtest.Connect(t, in.URL, "attacker")
	// Even trusted, a kill needs a permit: one stays pending throughout.
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	p := c.Call("machine", map[string]any{"operation": "process_kill", "pid": victim.Process.Pid})
	permitID := p.Get("permit_id")
	if p.State() != "pending" || permitID == nil {
		t.Fatalf("a kill must wait for a permit: %s", p.Raw)
	}
	// An operator e-stop and reset leave the queue held and the latch
	// released, so tools run and a resume would show.
	if err := in.App.Operator.EStop(bg, "bob", "hold the queue"); err != nil {
		t.Fatal(err)
	}
	if err := in.App.Operator.Reset(bg, "bob"); err != nil {
		t.Fatal(err)
	}
	meta := operatorMeta("attacker", permitID)
	before := readGovState(t, in)
	if !before.QueueHeld || before.EStop.Latched || before.Permits[permitID.(string)] != "pending" {
		t.Fatalf("set-up: %+v", before)
	}

	ran := 0
	for _, s := range in.App.Registry.All() {
		if s.Name() == "machine.estop" {
			continue // latching is the model's one safety action; TestEStop* cover it
		}
		n := counts[s.Name()]
		was := n.Load()
		if r, err := c.TryCall(s.Tool, withOperatorFields(sampleArgs(s), permitID), meta); err != nil || r.Get("error.code") != "invalid_input" || n.Load() != was {
			t.Errorf("%s with operator fields must be refused before it runs: %v %v", s.Name(), err, r)
		}
		r, err := c.TryCall(s.Tool, sampleArgs(s), meta)
		if err != nil {
			t.Fatalf("%s: %v", s.Name(), err)
		}
		switch {
		case s.Risk == primitive.RiskKill:
			if r.State() != "pending" || r.Get("permit_id") == nil || n.Load() != was {
				t.Errorf("%s must wait for its own permit: %s", s.Name(), r.Raw)
			}
		case n.Load() == was:
			t.Errorf("%s did not run (so it never saw the _meta): %s", s.Name(), r.Raw)
		default:
			ran++
		}
	}

	kinds := in.App.Runs.Kinds()
	for _, kind := range kinds {
		spec, ok := in.App.Registry.Lookup(kind)
		if !ok {
			t.Fatalf("scatter kind %s is not registered", kind)
		}
		item := sampleArgs(spec)
		delete(item, "operation")
		item["kind"] = kind
		was := counts[kind].Load()
		r, err := c.TryCall("run", map[string]any{"operation": "scatter", "calls": []any{item}}, meta)
		if err != nil {
			t.Fatal(err)
		}
		fid, _ := r.Get("result.futures.0.future_id").(string)
		if fid == "" { // a call that failed at once makes the scatter all_refused
			fid, _ = r.Get("error.details.futures.0.future_id").(string)
		}
		if fid == "" {
			t.Fatalf("scatter of %s: %s", kind, r.Raw)
		}
		c.WaitArrival(fid, r)
		if counts[kind].Load() == was {
			t.Errorf("scatter kind %s did not run", kind)
		}
	}

	var steps []string
	for _, name := range recipes.StepPrimitives() {
		spec, ok := in.App.Registry.Lookup(name)
		if !ok {
			continue
		}
		steps = append(steps, name)
		input := sampleArgs(spec)
		delete(input, "operation")
		recipe := "op-" + strings.ReplaceAll(name, ".", "-")
		r, err := c.TryCall("recipe", map[string]any{"operation": "create", "name": recipe,
			"steps": []any{map[string]any{"primitive": name, "input": input}}}, meta)
		if err != nil || r.State() != "completed" {
			t.Fatalf("create a recipe with one %s step: %v %v", name, err, r)
		}
		was := counts[name].Load()
		r, err = c.TryCall("recipe", map[string]any{"operation": "run", "name": recipe}, meta)
		if err != nil {
			t.Fatal(err)
		}
		if fid, _ := r.Get("future_id").(string); fid != "" {
			c.WaitArrival(fid, r)
		}
		if counts[name].Load() == was {
			t.Errorf("recipe step %s did not run: %s", name, r.Raw)
		}
	}
	if ran < 30 || len(kinds) < 10 || len(steps) < 3 {
		t.Fatalf("only %d primitives, %d scatter kinds, %d recipe steps ran", ran, len(kinds), len(steps))
	}
	assertOperatorStateKept(t, before, readGovState(t, in))
	if victim.ProcessState != nil || syscall.Kill(victim.Process.Pid, 0) != nil {
		t.Error("the kill ran without the operator's approval")
	}

	// Ask: exec-class calls park for permits instead of running; nothing
	// decides one.
	if err := in.App.Operator.SetPolicy(bg, "bob", config.ModeAsk); err != nil {
		t.Fatal(err)
	}
	before = readGovState(t, in)
	for _, s := range in.App.Registry.All() {
		if s.Name() == "machine.estop" {
			continue
		}
		was := counts[s.Name()].Load()
		r, err := c.TryCall(s.Tool, sampleArgs(s), meta)
		if err != nil {
			t.Fatalf("%s: %v", s.Name(), err)
		}
		parked := r.State() == "pending" && r.Get("permit_id") != nil
		if parked == (counts[s.Name()].Load() != was) {
			t.Errorf("ask: %s must either run or wait for a permit: %s", s.Name(), r.Raw)
		}
	}
	assertOperatorStateKept(t, before, readGovState(t, in))

	// Latched: the read primitives still run and see the _meta; the latch
	// stays.
	if err := in.App.Operator.EStop(bg, "bob", "held"); err != nil {
		t.Fatal(err)
	}
	before = readGovState(t, in)
	for _, s := range in.App.Registry.All() {
		if s.Risk != primitive.RiskRead {
			continue
		}
		was := counts[s.Name()].Load()
		if _, err := c.TryCall(s.Tool, sampleArgs(s), meta); err != nil {
			t.Fatalf("%s: %v", s.Name(), err)
		}
		if counts[s.Name()].Load() == was {
			t.Errorf("read %s did not run under the e-stop", s.Name())
		}
	}
	assertOperatorStateKept(t, before, readGovState(t, in))
}

func TestPermitRunsJournaledInputOnce(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask
	c := hearthtest.Connect(t, in.URL, "permits")
	out := filepath.Join(in.Home, "out.txt")
	meta := map[string]any{"hearth/command_id": "cmd-permit-1"}
	r, err := c.TryCall("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "echo original >> " + out}}, meta)
	if err != nil || r.State() != "pending" {
		t.Fatalf("%v %s", err, r.Raw)
	}
	pid, fid := r.Get("permit_id").(string), r.Get("future_id").(string)
	// The same command id with another input is a conflict, never a way to
	// swap what the permit covers.
	r2, _ := c.TryCall("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "echo swapped >> " + out}}, meta)
	if r2.State() != "conflict" {
		t.Fatalf("different input under the same command id: %s", r2.Raw)
	}
	// The same command id and input is the same pending call.
	r3, _ := c.TryCall("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "echo original >> " + out}}, meta)
	if r3.State() != "pending" || r3.Get("permit_id") != pid {
		t.Fatalf("retry of a parked call: %s", r3.Raw)
	}
	ps, _ := in.App.Operator.Permits(bg, "pending")
	if len(ps) != 1 || !strings.Contains(ps[0].Input, "echo original") || ps[0].Programs[0].Command != "sh" {
		t.Fatalf("operator sees: %+v", ps)
	}
	if err := in.App.Operator.Approve(bg, pid, "alice", nil); err != nil {
		t.Fatal(err)
	}
	if err := in.App.Operator.Approve(bg, pid, "alice", nil); err == nil {
		t.Fatal("a second approval must be refused")
	}
	arr := c.WaitArrival(fid)
	if hearthtest.Get(arr, "envelope.state") != "completed" {
		t.Fatalf("approved call: %v", arr)
	}
	b, _ := os.ReadFile(out)
	if string(b) != "original\n" {
		t.Fatalf("ran %q, want exactly the journaled input once", b)
	}
	// A replay of the finished command returns the stored outcome.
	r4, _ := c.TryCall("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "echo original >> " + out}}, meta)
	if r4.Get("replayed") != true || r4.State() != "completed" {
		t.Fatalf("replay: %s", r4.Raw)
	}
	if b, _ := os.ReadFile(out); string(b) != "original\n" {
		t.Fatalf("replay ran again: %q", b)
	}
}

func TestPermitDenyAndExpiry(t *testing.T) {
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "deny")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"a"}})
	if err := in.App.Operator.Deny(bg, r.Get("permit_id").(string), "alice"); err != nil {
		t.Fatal(err)
	}
	arr := c.WaitArrival(r.Get("future_id").(string), r)
	if hearthtest.Get(arr, "envelope.state") != "blocked" || hearthtest.Get(arr, "envelope.error.code") != "permit_denied" {
		t.Fatalf("denied: %v", arr)
	}
	// Expiry with an injected clock. The running expiry loop is stopped
	// first (it reads the clock), so the test alone drives the expiry.
	in.App.Operator.Stop()
	var now atomic.Int64
	now.Store(time.Now().UnixMilli())
	in.App.Gov.Now = func() time.Time { return time.UnixMilli(now.Load()) }
	r = c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"b"}})
	pid := r.Get("permit_id").(string)
	now.Add((16 * time.Minute).Milliseconds())
	if err := in.App.Operator.ExpirePermits(bg); err != nil {
		t.Fatal(err)
	}
	arr = c.WaitArrival(r.Get("future_id").(string), r)
	if hearthtest.Get(arr, "envelope.error.code") != "permit_expired" {
		t.Fatalf("expired: %v", arr)
	}
	if err := in.App.Operator.Approve(bg, pid, "alice", nil); err == nil {
		t.Fatal("approving an expired permit must fail")
	}
}

func TestAllowRuleSkipsPermit(t *testing.T) {
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "rules")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"1"}, "cwd": in.Home})
	if r.State() != "pending" {
		t.Fatalf("%s", r.Raw)
	}
	// The card showed "echo 1": the rule is that call, in that folder.
	rule := &govern.Rule{Program: "echo", Args: []string{"1"}, CwdRoot: in.Home}
	if err := in.App.Operator.Approve(bg, r.Get("permit_id").(string), "alice", rule); err != nil {
		t.Fatal(err)
	}
	// In a folder below (an identical call would be answered by the
	// approved one).
	sub := filepath.Join(in.Home, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	r = c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"1"}, "cwd": sub})
	if r.State() != "completed" || r.Get("replayed") == true {
		t.Fatalf("allowed program under its root: %s", r.Raw)
	}
	r = c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"1", "2"}, "cwd": sub})
	if r.State() != "pending" {
		t.Fatalf("an argument the card did not show needs a permit: %s", r.Raw)
	}
	r = c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"1"}, "cwd": "/"})
	if r.State() != "pending" {
		t.Fatalf("outside the rule's cwd root a permit is needed: %s", r.Raw)
	}
	if _, err := in.App.Operator.AddRule(bg, "alice", "sh", ""); !errors.Is(err, govern.ErrAsksEveryTime) {
		t.Fatalf("a rule for sh must be refused (a shell asks every time): %v", err)
	}
}

func TestReadOnlyModeRefusesNonRead(t *testing.T) {
	in := hearthtest.Start(t, func(c *config.Config) { c.Policy.Mode = config.ModeReadOnly })
	c := hearthtest.Connect(t, in.URL, "ro")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo"})
	if r.State() != "blocked" || r.Get("error.code") != "read_only" {
		t.Fatalf("%s", r.Raw)
	}
	if r := c.Call("machine", map[string]any{"operation": "estop", "reason": "allowed even read-only"}); r.State() != "completed" {
		t.Fatalf("estop must work in read-only: %s", r.Raw)
	}
	if err := in.App.Operator.Reset(bg, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := in.App.Operator.SetPolicy(bg, "alice", config.ModeTrusted); err != nil {
		t.Fatal(err)
	}
	if r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo"}); r.State() != "completed" {
		t.Fatalf("after policy change to trusted: %s", r.Raw)
	}
}

// TestSecretsAndRawIDsNeverPersisted sends raw OpenAI identifiers and a
// distinctive string JSON-RPC request id, and saves a distinctive tunnel
// runtime key the way the Setup page does (journaling tunnel_key_set in
// the real ledger); none of them may appear in the database (and its WAL,
// read while Hearth runs), any other file of the data directory or the
// ledger export. The key is kept only by the secrets store.
func TestSecretsAndRawIDsNeverPersisted(t *testing.T) {
	in := hearthtest.Start(t, hearthtest.Trusted)
	const session = "sess-RAW-OPENAI-7f3a9c"
	const conv = "conv-RAW-LOCAL-55e1"
	const tunnelKey = "tk-RAW-TUNNEL-KEY-0b7d41-Q9ZX" // last four: not hex
	const requestID = "rpc-RAW-REQUEST-ID-a81f"
	if err := in.App.Tunnel.SetKey(tunnelKey); err != nil {
		t.Fatalf("save the tunnel runtime key: %v", err)
	}
	if ok, err := in.App.Tunnel.KeyPresent(); err != nil || !ok {
		t.Fatalf("the tunnel runtime key was not stored: %v", err)
	}
	c := hearthtest.Connect(t, in.URL, conv)
	for _, meta := range []map[string]any{{"openai/session": session, "openai/subject": "subj-RAW-1", "openai/organization": "org-RAW-1"}, nil} {
		r, err := c.TryCall("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"x"}, "detach": true}, meta)
		if err != nil {
			t.Fatal(err)
		}
		fid := r.Get("future_id").(string)
		deadline := time.Now().Add(20 * time.Second)
		for got := false; !got; {
			if time.Now().After(deadline) {
				t.Fatalf("no arrival for %s", fid)
			}
			h, err := c.TryCall("machine", map[string]any{"operation": "host_info"}, meta)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range h.Arrivals() {
				got = got || a["future_id"] == fid
			}
		}
	}
	// A string request id, sent twice (a retry is fingerprinted to offer
	// the same arrivals again), on a detached call whose result arrives.
	fid := hearthtest.Get(rawToolCall(t, in.URL, requestID, conv, `{"operation":"exec","command":"echo","args":["y"],"detach":true}`), "result.structuredContent.future_id")
	if fid == nil {
		t.Fatal("the raw call returned no future")
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		arr, _ := hearthtest.Get(rawToolCall(t, in.URL, requestID, conv, `{"operation":"host_info"}`), "result.structuredContent.arrivals").([]any)
		if slices.ContainsFunc(arr, func(a any) bool { return hearthtest.Get(a, "future_id") == fid }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no arrival for %v", fid)
		}
	}
	c.Call("machine", map[string]any{"operation": "estop", "reason": "r"})
	var bundle bytes.Buffer
	if err := in.App.Ledger.Export(bg, &bundle, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(bundle.Bytes(), []byte("tunnel_key_set")) || !bytes.Contains(bundle.Bytes(), []byte(tunnelKey[len(tunnelKey)-4:])) {
		t.Fatal("the ledger export lacks the tunnel_key_set entry with the key's last four characters")
	}
	// The database and its WAL while Hearth runs (closing checkpoints and
	// removes the WAL).
	var live []byte
	for _, f := range []string{"hearth.db", "hearth.db-wal", "hearth.db-shm"} {
		b, _ := os.ReadFile(filepath.Join(in.Home, f))
		live = append(live, b...)
	}
	if !bytes.Contains(live, []byte("SQLite format 3")) || !bytes.Contains(live, []byte("tunnel_key_set")) {
		t.Fatal("the live database (with its tunnel_key_set entry) was not read")
	}
	in.Stop()
	secretsDir := filepath.Join(in.Home, "secrets") // the development key store, by design
	var all, allButSecrets []byte
	filepath.Walk(in.Home, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			all = append(all, b...)
			if !strings.HasPrefix(p, secretsDir+string(filepath.Separator)) {
				allButSecrets = append(allButSecrets, b...)
			}
		}
		return nil
	})
	for _, b := range [][]byte{live, bundle.Bytes()} {
		all = append(all, b...)
		allButSecrets = append(allButSecrets, b...)
	}
	for _, raw := range []string{session, conv, "subj-RAW-1", "org-RAW-1", requestID} {
		if bytes.Contains(all, []byte(raw)) {
			t.Errorf("raw identifier %q found in the data directory, the live database or the ledger export", raw)
		}
	}
	if bytes.Contains(allButSecrets, []byte(tunnelKey)) || bytes.Contains(allButSecrets, []byte(base64.StdEncoding.EncodeToString([]byte(tunnelKey)))) {
		t.Error("the tunnel runtime key was found outside the secrets store")
	}
}

// rawToolCall posts one tools/call with a string JSON-RPC id and returns
// the decoded JSON-RPC response.
func rawToolCall(t *testing.T, url, id, conversation, args string) map[string]any {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"machine","arguments":%s,"_meta":{"hearth/conversation":%q}}}`, id, args, conversation)
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &m) != nil || m["id"] != id {
		t.Fatalf("raw call: status %d: %s", resp.StatusCode, b)
	}
	return m
}
