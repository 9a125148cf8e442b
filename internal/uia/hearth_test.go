package uia_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/uia"
	"github.com/hearth-dev/hearth/internal/uia/uiatest"
)

// desktop is a fake desktop with one window (hwnd 7, process 100): an OK
// button and an edit box.
func desktop() *uiatest.FakeProvider {
	p := func(ct, name, id string, pats ...string) uia.Props {
		return uia.Props{ControlType: ct, Name: name, AutomationID: id, ProcessID: 100, Enabled: true,
			Bounds: uia.Bounds{X: 10, Y: 10, W: 80, H: 24}, Patterns: pats}
	}
	win := &uiatest.FakeElement{Props: p("Window", "Fixture", "")}
	win.HWND = 7
	win.Children = []*uiatest.FakeElement{
		{Props: p("Button", "OK", "ok", "invoke")},
		{Props: p("Edit", "Name", "name", "value")},
	}
	return &uiatest.FakeProvider{Desktop: &uiatest.FakeElement{Props: p("Pane", "Desktop", ""), Children: []*uiatest.FakeElement{win}}}
}

func withUI(f *uiatest.FakeProvider) func(*app.Options) {
	return func(o *app.Options) { o.UIProvider = f }
}

// TestUnavailableHostAnswersBlocked: where UI Automation does not exist
// (every OS but Windows; Windows without it, as under Wine) the ui tool is
// served and every operation answers blocked with the reason, and
// host_info and the tool descriptions say so.
func TestUnavailableHostAnswersBlocked(t *testing.T) {
	in := hearthtest.Start(t, hearthtest.Trusted)
	if in.App.UI.Available(t.Context()) == nil {
		t.Skip("UI Automation works on this host")
	}
	c := hearthtest.Connect(t, in.URL, "off-host")
	for _, args := range []map[string]any{
		{"operation": "snapshot"},
		{"operation": "query", "target": map[string]any{"name": "OK"}},
		{"operation": "action", "action": "invoke", "target": map[string]any{"name": "OK"}},
	} {
		r := c.Call("ui", args)
		if r.State() != "blocked" || r.Get("error.code") != "unavailable" || !r.IsError {
			t.Fatalf("%v: %s", args, r.Raw)
		}
		if reason, _ := r.Get("error.details.reason").(string); !strings.HasPrefix(reason, uia.Unavailable) {
			t.Fatalf("reason %q, want %q: %s", reason, uia.Unavailable, r.Raw)
		}
	}
	// Fallback input is refused at once: the operator is not asked for a
	// permit that could not make it run.
	r := c.Call("ui", map[string]any{"operation": "action", "action": "click", "allow_fallback": true, "hwnd": 7, "target": map[string]any{"name": "OK"}})
	if r.State() != "blocked" || r.Get("error.code") != "unavailable" {
		t.Fatalf("fallback click here: %s", r.Raw)
	}
	if ps, _ := in.App.Operator.Permits(t.Context(), "pending"); len(ps) != 0 {
		t.Fatalf("a permit was asked for input this host cannot send: %+v", ps)
	}
	h := c.Call("machine", map[string]any{"operation": "host_info"})
	if h.Get("result.ui_automation.available") != false || !strings.HasPrefix(h.Get("result.ui_automation.reason").(string), uia.Unavailable) {
		t.Fatalf("host_info: %v", h.Get("result.ui_automation"))
	}
	unavailable, _ := h.Get("result.unavailable").([]any)
	if !slices.ContainsFunc(unavailable, func(u any) bool { return strings.HasPrefix(u.(string), "ui automation (") }) {
		t.Fatalf("host_info unavailable: %v", unavailable)
	}
	res, err := c.Session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "ui" && !strings.Contains(tool.Description, "ui automation (") {
			t.Fatalf("the ui tool's description does not disclose it: %s", tool.Description)
		}
	}
}

// TestFallbackInputNeedsAPermit: with a (fake) working UI Automation,
// fallback input parks for the operator's permit in the trusted and ask
// modes and runs once approved; semantic actions run at once in trusted
// mode and once the operator allows them in ask mode.
func TestFallbackInputNeedsAPermit(t *testing.T) {
	for _, mode := range []string{config.ModeTrusted, config.ModeAsk} {
		t.Run(mode, func(t *testing.T) {
			f := desktop()
			in := hearthtest.StartWith(t, func(c *config.Config) { c.Policy.Mode = mode }, withUI(f))
			c := hearthtest.Connect(t, in.URL, "ui-"+mode)
			h := c.Call("machine", map[string]any{"operation": "host_info"})
			if h.Get("result.ui_automation.available") != true {
				t.Fatalf("host_info with a working provider: %v", h.Get("result.ui_automation"))
			}

			// semantic runs a semantic action: in trusted mode at once; in
			// ask mode after the operator allows it (the app is not known
			// before these calls run here, so each asks on its own).
			semantic := func(args map[string]any) map[string]any {
				t.Helper()
				r := c.Call("ui", args)
				if mode == config.ModeTrusted {
					return r.Env
				}
				pid, _ := r.Get("permit_id").(string)
				fid, _ := r.Get("future_id").(string)
				if r.State() != "pending" || pid == "" {
					t.Fatalf("a UI action must ask first in ask mode: %s", r.Raw)
				}
				if err := in.App.Operator.Approve(t.Context(), pid, "ada", nil); err != nil {
					t.Fatal(err)
				}
				env, _ := c.WaitArrival(fid, r)["envelope"].(map[string]any)
				return env
			}
			env := semantic(map[string]any{"operation": "action", "action": "invoke", "target": map[string]any{"automation_id": "ok"}})
			if hearthtest.Get(env, "state") != "completed" || hearthtest.Get(env, "result.element.locator") != "n3" {
				t.Fatalf("semantic invoke: %v", env)
			}
			env = semantic(map[string]any{"operation": "action", "action": "set_value", "value": "Ada", "hwnd": 7, "target": map[string]any{"automation_id": "name"}})
			if hearthtest.Get(env, "state") != "completed" || hearthtest.Get(env, "result.value_after") != "Ada" {
				t.Fatalf("semantic set_value: %v", env)
			}
			if ps, _ := in.App.Operator.Permits(t.Context(), "pending"); len(ps) != 0 {
				t.Fatalf("permits left waiting: %+v", ps)
			}

			// Refused before governance: no permit is asked for input that
			// could never run.
			r := c.Call("ui", map[string]any{"operation": "action", "action": "click", "hwnd": 7, "target": map[string]any{"automation_id": "ok"}})
			if r.State() != "blocked" || r.Get("error.code") != "fallback_refused" || !strings.Contains(r.Get("error.message").(string), "allow_fallback") {
				t.Fatalf("click without allow_fallback: %s", r.Raw)
			}
			r = c.Call("ui", map[string]any{"operation": "action", "action": "click", "allow_fallback": true, "target": map[string]any{"automation_id": "ok"}})
			if r.State() != "blocked" || !strings.Contains(r.Get("error.message").(string), `"hwnd"`) {
				t.Fatalf("unscoped click: %s", r.Raw)
			}
			if ps, _ := in.App.Operator.Permits(t.Context(), "pending"); len(ps) != 0 {
				t.Fatalf("refused input asked for permits: %+v", ps)
			}

			r = c.Call("ui", map[string]any{"operation": "action", "action": "click", "allow_fallback": true, "hwnd": 7, "target": map[string]any{"automation_id": "ok"}})
			pid, _ := r.Get("permit_id").(string)
			if r.State() != "pending" || pid == "" {
				t.Fatalf("fallback click must park for a permit in %s mode: %s", mode, r.Raw)
			}
			for _, a := range f.Actions() {
				if a.Action == uia.ActClick {
					t.Fatal("the click ran before the permit")
				}
			}
			ps, err := in.App.Operator.Permits(t.Context(), "pending")
			if err != nil || len(ps) != 1 || ps[0].Primitive != "ui.action" || !strings.Contains(ps[0].Input, `"allow_fallback":true`) {
				t.Fatalf("the operator sees: %+v %v", ps, err)
			}
			if err := in.App.Operator.Approve(t.Context(), pid, "alice", nil); err != nil {
				t.Fatal(err)
			}
			arr := c.WaitArrival(r.Get("future_id").(string), r)
			if hearthtest.Get(arr, "envelope.state") != "completed" || hearthtest.Get(arr, "envelope.result.fallback") != true {
				t.Fatalf("approved click: %v", arr)
			}
			got := f.Actions()
			if len(got) != 3 || got[2].Action != uia.ActClick || got[2].Scope != (uia.Scope{HWND: 7}) {
				t.Fatalf("provider actions: %+v", got)
			}
			if f.Overlaps() != 0 {
				t.Fatalf("%d provider calls overlapped", f.Overlaps())
			}
		})
	}
}

// TestUIGovernance: read-only mode refuses ui.action but not reads;
// run.scatter offers the ui kinds, never with fallback input.
func TestUIGovernance(t *testing.T) {
	f := desktop()
	in := hearthtest.StartWith(t, func(c *config.Config) { c.Policy.Mode = config.ModeReadOnly }, withUI(f))
	c := hearthtest.Connect(t, in.URL, "ui-gov")
	r := c.Call("ui", map[string]any{"operation": "action", "action": "invoke", "target": map[string]any{"automation_id": "ok"}})
	if r.State() != "blocked" || r.Get("error.code") != "read_only" {
		t.Fatalf("read-only: %s", r.Raw)
	}
	r = c.Call("ui", map[string]any{"operation": "snapshot", "hwnd": 7})
	if r.State() != "completed" || r.Get("result.roots.0.locator") != "n1" || r.Get("result.node_count") != float64(3) {
		t.Fatalf("snapshot in read-only: %s", r.Raw)
	}
	r = c.Call("ui", map[string]any{"operation": "query", "target": map[string]any{"control_type": "button"}, "max_depth": 13})
	if r.State() != "failed" || !strings.Contains(r.Get("error.message").(string), `"max_depth"`) {
		t.Fatalf("validation names the field: %s", r.Raw)
	}

	kinds := in.App.Runs.Kinds()
	for _, k := range []string{"ui.snapshot", "ui.query", "ui.action"} {
		if !slices.Contains(kinds, k) {
			t.Fatalf("scatter kinds %v lack %s", kinds, k)
		}
	}
	r = c.Call("run", map[string]any{"operation": "scatter", "calls": []any{
		map[string]any{"kind": "ui.action", "action": "click", "allow_fallback": true, "hwnd": 7, "target": map[string]any{"automation_id": "ok"}},
	}})
	if r.Get("error.code") != "invalid_input" || !strings.Contains(r.Get("error.message").(string), "allow_fallback") {
		t.Fatalf("scatter must refuse fallback input: %s", r.Raw)
	}
	r = c.Call("run", map[string]any{"operation": "scatter", "calls": []any{
		map[string]any{"kind": "ui.query", "hwnd": 7, "target": map[string]any{"name": "ok"}},
	}})
	if r.State() != "completed" {
		t.Fatalf("scatter of ui.query: %s", r.Raw)
	}
	fid := r.Get("result.futures.0.future_id").(string)
	arr := c.WaitArrival(fid, r)
	if hearthtest.Get(arr, "envelope.result.match_count") != float64(1) {
		t.Fatalf("scattered query: %v", arr)
	}
}
