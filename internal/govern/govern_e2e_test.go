//go:build !windows

package govern_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/primitive"
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

func sampleArgs(s *primitive.Spec) map[string]any {
	args := map[string]any{"operation": s.Operation}
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
	}
	return counts
}

func TestEStopBlocksEveryNonReadPrimitive(t *testing.T) {
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
	t.Logf("%d non-read primitives refused; ledger verifies (%d entries)", checked, rep.Entries)
}

func TestEStopKillsRunningWork(t *testing.T) {
	in := hearthtest.Start(t, hearthtest.Trusted)
	c := hearthtest.Connect(t, in.URL, "kill")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "sleep", "args": []string{"30"}})
	if r.State() != "pending" {
		t.Fatalf("%s", r.Raw)
	}
	start := time.Now()
	if err := in.App.Operator.EStop(bg, "bob", "panic"); err != nil {
		t.Fatal(err)
	}
	arr := c.WaitArrival(r.Get("future_id").(string), r)
	if hearthtest.Get(arr, "envelope.state") != "cancelled" || time.Since(start) > 10*time.Second {
		t.Fatalf("running exec not cancelled by e-stop: %v", arr)
	}
}

// TestNoToolReachesOperatorActions calls every primitive in the registry,
// with sample input and with operator-looking _meta, while a permit is
// pending, the e-stop is latched and the policy is ask; none of them may
// reset, approve, add a rule or change policy.
func TestNoToolReachesOperatorActions(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask
	c := hearthtest.Connect(t, in.URL, "attacker")
	p := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"hi"}})
	if p.State() != "pending" || p.Get("permit_id") == nil {
		t.Fatalf("ask mode must park exec for a permit: %s", p.Raw)
	}
	if err := in.App.Gov.Latch(bg, "operator:test", "held"); err != nil {
		t.Fatal(err)
	}
	metas := []map[string]any{nil, {"hearth/operator": "alice", "hearth/approve": p.Get("permit_id"), "hearth/reset": true, "hearth/policy": "trusted"}}
	for _, s := range in.App.Registry.All() {
		for _, m := range metas {
			if _, err := c.TryCall(s.Tool, sampleArgs(s), m); err != nil {
				t.Fatalf("%s: %v", s.Name(), err)
			}
		}
	}
	st, _ := in.App.Gov.EStop(bg)
	if !st.Latched {
		t.Error("a tool call released the e-stop")
	}
	if m := in.App.Gov.Mode(bg); m != config.ModeAsk {
		t.Errorf("a tool call changed the policy to %s", m)
	}
	if rules, _ := in.App.Gov.Rules(bg); len(rules) != 0 {
		t.Errorf("a tool call added rules: %v", rules)
	}
	ps, _ := in.App.Operator.Permits(bg, "pending")
	if len(ps) != 1 {
		t.Errorf("the permit was decided by a tool call: %v", ps)
	}
	if held, _ := in.App.Gov.QueueHeld(bg); !held {
		t.Error("a tool call resumed the queue")
	}
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
	// Expiry with an injected clock.
	var now atomic.Int64
	now.Store(time.Now().UnixMilli())
	in.App.Gov.Now = func() time.Time { return time.UnixMilli(now.Load()) }
	r = c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"b"}})
	pid := r.Get("permit_id").(string)
	now.Add((16 * time.Minute).Milliseconds())
	if err := in.App.Gov.ExpirePermits(bg); err != nil {
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
	rule := struct{ Program, Root string }{"echo", in.Home}
	if err := in.App.Operator.Approve(bg, r.Get("permit_id").(string), "alice", govRule{rule.Program, rule.Root}.rule()); err != nil {
		t.Fatal(err)
	}
	r = c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"2"}, "cwd": in.Home})
	if r.State() != "completed" {
		t.Fatalf("allowed program under its root: %s", r.Raw)
	}
	r = c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"3"}, "cwd": "/"})
	if r.State() != "pending" {
		t.Fatalf("outside the rule's cwd root a permit is needed: %s", r.Raw)
	}
	sh, err := in.App.Operator.AddRule(bg, "alice", "sh", "")
	if err != nil || !sh.Interpreter {
		t.Fatalf("a rule for sh must be flagged as an interpreter: %+v %v", sh, err)
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

func TestSecretsAndRawIDsNeverPersisted(t *testing.T) {
	in := hearthtest.Start(t, hearthtest.Trusted)
	const session = "sess-RAW-OPENAI-7f3a9c"
	const conv = "conv-RAW-LOCAL-55e1"
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
	c.Call("machine", map[string]any{"operation": "estop", "reason": "r"})
	var bundle bytes.Buffer
	if err := in.App.Ledger.Export(bg, &bundle, 0); err != nil {
		t.Fatal(err)
	}
	in.Stop()
	var all []byte
	filepath.Walk(in.Home, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			all = append(all, b...)
		}
		return nil
	})
	all = append(all, bundle.Bytes()...)
	for _, raw := range []string{session, conv, "subj-RAW-1", "org-RAW-1"} {
		if bytes.Contains(all, []byte(raw)) {
			t.Errorf("raw identifier %q found in the data directory or ledger export", raw)
		}
	}
}
