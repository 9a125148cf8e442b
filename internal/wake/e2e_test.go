//go:build !windows

package wake_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/wake"
)

// TestFakeChatGPTConversationIsWokenAndReceivesArrivals runs the whole
// path in a real Hearth: a "conversation" (the fake ChatGPT page and a
// fake model driving a real MCP client with _meta["openai/session"])
// starts detached work and gets a pending answer with a route_probe,
// shows that answer in its tab, is bound, goes quiet; the work finishes,
// Hearth wakes the tab, and the woken conversation calls host_info and
// receives the arrival.
func TestFakeChatGPTConversationIsWokenAndReceivesArrivals(t *testing.T) {
	fake := wake.NewFakeChatGPT(t)
	in := hearthtest.Start(t, func(c *config.Config) {
		hearthtest.Trusted(c)
		c.Wake.Armed = true
		c.Wake.BrowserPath = wake.TestBrowser
		c.Wake.QuietMS = 0
	})
	wake.AllowOriginForTest(in.App.Wake, fake.Origin())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := in.App.OpenChatGPT(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := wake.OpenTabForTest(ctx, in.App.Wake, fake.URL("e2e")); err != nil {
		t.Fatal(err)
	}

	c := hearthtest.Connect(t, in.URL, "")
	meta := map[string]any{"openai/session": "sess-e2e-1"}
	list, err := c.Session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list.Tools[0].Description, "Wake: ARMED") {
		t.Fatalf("tool description does not disclose wake: %q", list.Tools[0].Description)
	}
	gate := filepath.Join(t.TempDir(), "gate")
	r, err := c.TryCall("machine", map[string]any{"operation": "exec", "command": "sh",
		"args": []string{"-c", `while [ ! -e "$0" ]; do sleep 0.02; done; echo done`, gate}, "detach": true}, meta)
	if err != nil {
		t.Fatal(err)
	}
	nonce, _ := r.Get("route_probe.nonce").(string)
	if r.State() != "pending" || !strings.HasPrefix(nonce, "hrp_") || r.Get("route_probe.expires_at") == nil {
		t.Fatalf("pending answer without a route probe: %s", r.Raw)
	}
	if !strings.Contains(r.Text, nonce) {
		t.Fatalf("the pending text does not carry the nonce: %q", r.Text)
	}
	future := r.Get("future_id").(string)
	// A second pending answer reuses the live nonce.
	r2, err := c.TryCall("machine", map[string]any{"operation": "exec", "command": "sh",
		"args": []string{"-c", `while [ ! -e "$0" ]; do sleep 0.02; done`, gate}, "detach": true}, meta)
	if err != nil || r2.Get("route_probe.nonce") != nonce {
		t.Fatalf("second pending answer: %v %s", err, r2.Raw)
	}
	// An answer that is not pending carries no probe.
	if hi, err := c.TryCall("machine", map[string]any{"operation": "host_info"}, meta); err != nil || hi.Get("route_probe") != nil {
		t.Fatalf("a completed answer: %v %s", err, hi.Raw)
	}
	// A conversation routed by hearth/conversation gets no probe.
	local := hearthtest.Connect(t, in.URL, "local-conv")
	if lr := local.Call("machine", map[string]any{"operation": "exec", "command": "true", "detach": true}); lr.Get("route_probe") != nil {
		t.Fatalf("a local conversation got a route probe: %s", lr.Raw)
	}
	fake.Show("e2e", "tool", r.Text)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("the binding", func() bool { return len(in.App.Wake.Bindings()) == 1 && in.App.Wake.Bindings()[0].Live })

	woken := make(chan *hearthtest.Result, 1)
	fake.OnSend = firstWake("e2e", func() {
		res, err := c.TryCall("machine", map[string]any{"operation": "host_info"}, meta)
		if err != nil {
			t.Errorf("woken host_info: %v", err)
		}
		woken <- res
	})
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var host *hearthtest.Result
	select {
	case host = <-woken:
	case <-ctx.Done():
		t.Fatal("the conversation was not woken")
	}
	if host == nil {
		t.Fatal("no host_info answer")
	}
	got := map[any]bool{}
	for _, a := range host.Arrivals() {
		got[a["future_id"]] = true
	}
	if !got[future] || !got[r2.Get("future_id")] {
		t.Fatalf("the woken host_info does not carry the arrivals of %s and %s: %s", future, r2.Get("future_id"), host.Raw)
	}
	if host.Get("result.wake.armed") != true || host.Get("result.wake.bound_conversations") != float64(1) {
		t.Fatalf("host_info wake status: %v", host.Get("result.wake"))
	}
	if n := len(fake.Sent("e2e")); n != 1 {
		t.Fatalf("%d prompts sent, want 1", n)
	}

	// A due continuation with target {browser_tab} wakes the bound tab
	// with its own prompt while wake is armed.
	fake.OnSend = nil
	run, err := c.TryCall("run", map[string]any{"operation": "checkpoint", "objective": "wake test"}, meta)
	if err != nil || run.IsError {
		t.Fatalf("checkpoint: %v %s", err, run.Raw)
	}
	runID := run.Get("result.id").(string)
	cont, err := c.TryCall("run", map[string]any{"operation": "schedule_continuation", "run_id": runID, "prompt": "Continue the wake test.",
		"delay_ms": 0, "target": map[string]any{"browser_tab": "bound"}}, meta)
	if err != nil || cont.IsError {
		t.Fatalf("schedule_continuation: %v %s", err, cont.Raw)
	}
	waitFor("the continuation typed into the tab", func() bool {
		s := fake.Sent("e2e")
		return len(s) == 2 && s[1] == "Continue the wake test."
	})
	st, err := c.TryCall("run", map[string]any{"operation": "continuation_status", "id": cont.Get("result.id")}, meta)
	if err != nil || st.Get("result.state") != "woken" || st.Get("result.executed") != true {
		t.Fatalf("continuation status: %v %s", err, st.Raw)
	}
	// Another conversation cannot aim a continuation at this tab.
	other := map[string]any{"openai/session": "sess-e2e-2"}
	run2, _ := c.TryCall("run", map[string]any{"operation": "checkpoint", "objective": "other"}, other)
	cont2, err := c.TryCall("run", map[string]any{"operation": "schedule_continuation", "run_id": run2.Get("result.id"), "prompt": "hijack",
		"delay_ms": 0, "target": map[string]any{"browser_tab": in.App.Wake.Bindings()[0].TargetID}}, other)
	if err != nil {
		t.Fatal(err)
	}
	waitFor("the other continuation settled", func() bool {
		st, err := c.TryCall("run", map[string]any{"operation": "continuation_status", "id": cont2.Get("result.id")}, other)
		return err == nil && st.Get("result.state") == "blocked"
	})
	if n := len(fake.Sent("e2e")); n != 2 {
		t.Fatalf("another conversation's continuation was typed into this tab (%d sent)", n)
	}

	// Disarmed, a browser_tab continuation stays the dry run.
	if err := in.App.SetWakeArmed(ctx, "test", false); err != nil {
		t.Fatal(err)
	}
	cont3, err := c.TryCall("run", map[string]any{"operation": "schedule_continuation", "run_id": runID, "prompt": "not while disarmed",
		"delay_ms": 0, "target": map[string]any{"browser_tab": "bound"}}, meta)
	if err != nil || cont3.IsError {
		t.Fatalf("schedule_continuation: %v %s", err, cont3.Raw)
	}
	waitFor("the disarmed continuation settled", func() bool {
		st, err := c.TryCall("run", map[string]any{"operation": "continuation_status", "id": cont3.Get("result.id")}, meta)
		return err == nil && st.Get("result.state") == "dry_run" && st.Get("result.executed") == false
	})
	if n := len(fake.Sent("e2e")); n != 2 {
		t.Fatalf("a disarmed continuation was typed into the tab (%d sent)", n)
	}
	if list, err := c.Session.ListTools(ctx, nil); err != nil || !strings.Contains(list.Tools[0].Description, "Wake: off") {
		t.Fatalf("tool description after disarming: %v", err)
	}
}

// TestBindingSurvivesHearthRestart binds a conversation in one run of
// Hearth, restarts Hearth on the same data directory (a new browser on
// the same profile, new target ids), and wakes the same conversation in
// its reopened tab.
func TestBindingSurvivesHearthRestart(t *testing.T) {
	fake := wake.NewFakeChatGPT(t)
	home := t.TempDir()
	in := hearthtest.StartHome(t, home, func(c *config.Config) {
		hearthtest.Trusted(c)
		c.Wake.Armed = true
		c.Wake.BrowserPath = wake.TestBrowser
		c.Wake.QuietMS = 0
		c.Wake.CooldownMS = 0
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	open := func(in *hearthtest.Instance) string {
		t.Helper()
		wake.AllowOriginForTest(in.App.Wake, fake.Origin())
		if err := in.App.OpenChatGPT(ctx); err != nil {
			t.Fatal(err)
		}
		tab, err := wake.OpenTabForTest(ctx, in.App.Wake, fake.URL("restart"))
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	first := open(in)
	meta := map[string]any{"openai/session": "sess-restart"}
	c := hearthtest.Connect(t, in.URL, "")
	r, err := c.TryCall("machine", map[string]any{"operation": "exec", "command": "true", "detach": true}, meta)
	if err != nil || r.Get("route_probe.nonce") == nil {
		t.Fatalf("pending answer: %v %s", err, r.Raw)
	}
	fake.Show("restart", "tool", r.Text)
	waitFor("the binding", func() bool { b := in.App.Wake.Bindings(); return len(b) == 1 && b[0].TargetID == first })
	// The conversation collects that quick job's arrival, so nothing
	// waits across the restart.
	waitFor("the first arrival collected", func() bool {
		hi, err := c.TryCall("machine", map[string]any{"operation": "host_info"}, meta)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range hi.Arrivals() {
			if a["future_id"] == r.Get("future_id") {
				return true
			}
		}
		return false
	})
	c.Session.Close()
	in.Stop()

	in2 := hearthtest.StartHome(t, home, nil)
	if b := in2.App.Wake.Bindings(); len(b) != 1 || b[0].Live || b[0].TargetID != first || b[0].ConvURL != fake.URL("restart") {
		t.Fatalf("bindings after restart: %+v", b)
	}
	second := open(in2)
	if second == first {
		t.Fatal("the new browser reused the target id; the test proves nothing")
	}
	waitFor("the binding to follow", func() bool { b := in2.App.Wake.Bindings(); return len(b) == 1 && b[0].Live && b[0].TargetID == second })

	c2 := hearthtest.Connect(t, in2.URL, "")
	woken := make(chan *hearthtest.Result, 1)
	fake.OnSend = firstWake("restart", func() {
		res, err := c2.TryCall("machine", map[string]any{"operation": "host_info"}, meta)
		if err != nil {
			t.Errorf("woken host_info: %v", err)
		}
		woken <- res
	})
	gate := filepath.Join(t.TempDir(), "gate")
	r2, err := c2.TryCall("machine", map[string]any{"operation": "exec", "command": "sh",
		"args": []string{"-c", `while [ ! -e "$0" ]; do sleep 0.02; done`, gate}, "detach": true}, meta)
	if err != nil || r2.Get("route_probe") != nil {
		t.Fatalf("a bound conversation's pending answer: %v %s", err, r2.Raw)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case host := <-woken:
		got := false
		for _, a := range host.Arrivals() {
			got = got || a["future_id"] == r2.Get("future_id")
		}
		if !got {
			t.Fatalf("the woken host_info lacks %v: %s", r2.Get("future_id"), host.Raw)
		}
	case <-ctx.Done():
		t.Fatal("not woken after the restart")
	}
}

// firstWake returns an OnSend that runs answer for the first wake prompt
// typed into conv only. The fake calls OnSend on its own goroutine, so
// with the tests' zero quiet time and cooldown the waker may type the
// prompt again before answer has collected the arrival; a later prompt
// would otherwise call a client the test is already closing.
func firstWake(conv string, answer func()) func(conv, text string) {
	var once sync.Once
	return func(c, text string) {
		if c == conv && text == wake.WakePrompt {
			once.Do(answer)
		}
	}
}
