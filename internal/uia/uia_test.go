package uia_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/screen"
	"github.com/hearth-dev/hearth/internal/uia"
	"github.com/hearth-dev/hearth/internal/uia/uiatest"
)

// The helpers shared with the package's own tests (helpers_test.go).
var str, num, code = uia.Str, uia.Num, uia.Code

func el(ct, name, id string, kids ...*uiatest.FakeElement) *uiatest.FakeElement {
	return &uiatest.FakeElement{Props: uia.Props{ControlType: ct, Name: name, AutomationID: id, Enabled: true, ProcessID: 100,
		Bounds: uia.Bounds{X: 10, Y: 10, W: 50, H: 20}}, Children: kids}
}

func with(e *uiatest.FakeElement, edit func(p *uia.Props)) *uiatest.FakeElement {
	edit(&e.Props)
	return e
}

// notepad is a small desktop: one app window (pid 100, hwnd 7) with a
// toolbar of two "OK" buttons, an edit box and a disabled button, and a
// second app (pid 200, hwnd 9).
func notepad() *uiatest.FakeProvider {
	button := func(name, id string) *uiatest.FakeElement {
		return with(el("Button", name, id), func(p *uia.Props) { p.Patterns = []string{"InvokePattern"} })
	}
	edit := with(el("Edit", "Text", "body"), func(p *uia.Props) { p.Patterns = []string{"ValuePattern"}; p.Value = str("hello") })
	disabled := with(button("Print", "print"), func(p *uia.Props) { p.Enabled = false })
	win := with(el("Window", "Untitled - Notepad", "",
		el("ToolBar", "Tools", "tools", button("OK", "ok1"), button("ok", "ok2"), disabled),
		edit,
	), func(p *uia.Props) { p.HWND = 7 })
	other := with(el("Window", "Other", "", button("Go", "go")), func(p *uia.Props) { p.HWND = 9; p.ProcessID = 200 })
	other.Children[0].ProcessID = 200
	desk := with(el("Pane", "Desktop", "", win, other), func(p *uia.Props) { p.ProcessID = 4 })
	return &uiatest.FakeProvider{Desktop: desk}
}

func newService(t *testing.T, p uia.Provider) *uia.Service {
	s := &uia.Service{Provider: p}
	t.Cleanup(s.Close)
	return s
}

func TestSnapshotNormalizesAndNumbersBreadthFirst(t *testing.T) {
	f := notepad()
	f.Desktop.Children[0].Children[1].Password = true
	long := strings.Repeat("x", 300)
	f.Desktop.Children[1].Name = "  Other\n\twindow " + long
	f.Desktop.Children[1].ControlType = "ControlType.window"
	f.Desktop.Children[1].Bounds = uia.Bounds{X: -5, Y: 0, W: -1, H: 3}
	f.Desktop.Children[1].Patterns = []string{"WindowPattern", "ExpandCollapsePattern", "window"}
	s := newService(t, f)
	res, err := s.Snapshot(t.Context(), uia.Input{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Roots) != 1 || res.Roots[0].Locator != "n1" || res.NodeCount != 9 || res.Truncated {
		t.Fatalf("snapshot: %+v", res)
	}
	win, other := res.Roots[0].Children[0], res.Roots[0].Children[1]
	if win.Locator != "n2" || other.Locator != "n3" || win.Children[0].Locator != "n4" || win.Children[0].Children[0].Locator != "n7" {
		t.Fatalf("locators are not breadth-first: %s %s %s %s", win.Locator, other.Locator, win.Children[0].Locator, win.Children[0].Children[0].Locator)
	}
	if win.HWND != 7 || win.ControlType != "Window" || !win.Enabled {
		t.Fatalf("window: %+v", win)
	}
	if other.ControlType != "Window" || other.Bounds.W != 0 || other.Bounds.X != -5 {
		t.Fatalf("normalized: %+v", other)
	}
	if want := "Other window " + strings.Repeat("x", uia.DefaultMaxText-14) + "…"; other.Name != want {
		t.Fatalf("name %q, want %q", other.Name, want)
	}
	if strings.Join(other.Patterns, ",") != "expand_collapse,window" {
		t.Fatalf("patterns %v", other.Patterns)
	}
	edit := win.Children[1]
	if edit.Value != nil || edit.ControlType != "Edit" {
		t.Fatalf("a password field's value must not be reported: %+v", edit)
	}
	b, _ := json.Marshal(res)
	for _, key := range []string{`"locator"`, `"automation_id"`, `"class_name"`, `"control_type"`, `"process_id"`, `"offscreen"`, `"focused"`, `"bounds"`, `"patterns"`, `"truncated":false`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("snapshot JSON lacks %s", key)
		}
	}
	if f.Outstanding() != 0 {
		t.Fatalf("%d element references not released", f.Outstanding())
	}
}

func chain(depth int) *uiatest.FakeElement {
	leaf := el("Text", fmt.Sprintf("level %d", depth), "")
	for i := depth - 1; i >= 0; i-- {
		leaf = el("Group", fmt.Sprintf("level %d", i), "", leaf)
	}
	return leaf
}

func TestBoundsAndTruncation(t *testing.T) {
	t.Run("depth", func(t *testing.T) {
		f := &uiatest.FakeProvider{Desktop: chain(20)}
		s := newService(t, f)
		res, err := s.Snapshot(t.Context(), uia.Input{})
		if err != nil {
			t.Fatal(err)
		}
		if res.NodeCount != uia.DefaultMaxDepth+1 || res.MaxDepth != uia.DefaultMaxDepth || !res.Truncated || res.TruncatedBy[0] != "max_depth" {
			t.Fatalf("default depth: %+v", res.Truncation)
		}
		n := res.Roots[0]
		for n.Children != nil {
			n = n.Children[0]
		}
		if !n.ChildrenTruncated || n.Name != "level 6" {
			t.Fatalf("the deepest node must say its children were cut: %+v", n)
		}
		res, _ = s.Snapshot(t.Context(), uia.Input{MaxDepth: num(40)})
		if res.NodeCount != uia.MaxDepth+1 || res.MaxDepth != uia.MaxDepth {
			t.Fatalf("max_depth is capped at %d: %+v", uia.MaxDepth, res.Truncation)
		}
		res, _ = s.Snapshot(t.Context(), uia.Input{MaxDepth: num(0)})
		if res.NodeCount != 1 || !res.Roots[0].ChildrenTruncated {
			t.Fatalf("max_depth 0 reads the roots only: %+v", res.Truncation)
		}
		// A leaf at the depth bound is not marked.
		res, _ = newService(t, &uiatest.FakeProvider{Desktop: chain(5)}).Snapshot(t.Context(), uia.Input{MaxDepth: num(5)})
		if res.Truncated || res.NodeCount != 6 {
			t.Fatalf("a tree within the bounds is not truncated: %+v", res.Truncation)
		}
	})
	t.Run("nodes", func(t *testing.T) {
		var kids []*uiatest.FakeElement
		for i := range 30 {
			kids = append(kids, el("ListItem", fmt.Sprintf("item %d", i), "", el("Text", "inner", "")))
		}
		f := &uiatest.FakeProvider{Desktop: el("List", "list", "", kids...)}
		s := newService(t, f)
		res, err := s.Snapshot(t.Context(), uia.Input{MaxNodes: num(10)})
		if err != nil {
			t.Fatal(err)
		}
		if res.NodeCount != 10 || !res.Truncated || res.TruncatedBy[0] != "max_nodes" || !res.Roots[0].ChildrenTruncated || len(res.Roots[0].Children) != 9 {
			t.Fatalf("max_nodes: %+v, root %d children", res.Truncation, len(res.Roots[0].Children))
		}
		if res.UnexpandedFrom != "n2" {
			t.Fatalf("breadth-first: the first item's children are the first unread: %q", res.UnexpandedFrom)
		}
		res, _ = s.Snapshot(t.Context(), uia.Input{MaxNodes: num(45)})
		if res.NodeCount != 45 || res.UnexpandedFrom != "n16" {
			t.Fatalf("max_nodes 45: %+v", res.Truncation)
		}
		res, _ = s.Snapshot(t.Context(), uia.Input{MaxNodes: num(1_000_000)})
		if res.MaxNodes != uia.MaxNodes || res.Truncated || res.NodeCount != 61 {
			t.Fatalf("max_nodes capped, whole tree read: %+v", res.Truncation)
		}
		if f.Outstanding() != 0 {
			t.Fatalf("%d references not released", f.Outstanding())
		}
	})
	t.Run("deadline", func(t *testing.T) {
		f := &uiatest.FakeProvider{Desktop: chain(12), CallDelay: 5 * time.Millisecond}
		s := &uia.Service{Provider: f, Deadline: 40 * time.Millisecond}
		t.Cleanup(s.Close)
		res, err := s.Snapshot(t.Context(), uia.Input{MaxDepth: num(12)})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || res.TruncatedBy[0] != "deadline" || res.NodeCount >= 13 || res.UnexpandedFrom == "" {
			t.Fatalf("deadline: %+v", res.Truncation)
		}
	})
	t.Run("vanished", func(t *testing.T) {
		f := notepad()
		f.Desktop.Children[1].Gone = true
		s := newService(t, f)
		res, err := s.Snapshot(t.Context(), uia.Input{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Skipped != 1 || len(res.Roots[0].Children) != 1 {
			t.Fatalf("a vanished element is skipped and counted: %+v", res.Truncation)
		}
	})
}

func locators(n *uia.Node, out map[string]string) {
	out[n.AutomationID+"/"+n.Name] = n.Locator
	for _, c := range n.Children {
		locators(c, out)
	}
}

func TestLocatorsStableWithinASnapshot(t *testing.T) {
	f := notepad()
	s := newService(t, f)
	a, _ := s.Snapshot(t.Context(), uia.Input{})
	b, _ := s.Snapshot(t.Context(), uia.Input{})
	la, lb := map[string]string{}, map[string]string{}
	locators(a.Roots[0], la)
	locators(b.Roots[0], lb)
	if fmt.Sprint(la) != fmt.Sprint(lb) {
		t.Fatalf("same UI, same bounds, different locators:\n%v\n%v", la, lb)
	}
	q, err := s.Query(t.Context(), uia.Input{Target: &uia.Target{AutomationID: str("body")}})
	if err != nil {
		t.Fatal(err)
	}
	if q.MatchCount != 1 || q.Matches[0].Locator != la["body/Text"] || q.Matches[0].Parent != la["/Untitled - Notepad"] || q.Matches[0].Depth != 2 {
		t.Fatalf("query locators differ from the snapshot's: %+v vs %v", q.Matches, la)
	}
	// Scoped to hwnd 7 the window is the root: locators are per answer.
	h, _ := s.Snapshot(t.Context(), uia.Input{HWND: 7})
	if h.Roots[0].Locator != "n1" || h.Roots[0].HWND != 7 {
		t.Fatalf("hwnd root: %+v", h.Roots[0])
	}
}

func TestQueryMatchesExactly(t *testing.T) {
	s := newService(t, notepad())
	cases := []struct {
		target uia.Target
		want   int
	}{
		{uia.Target{Name: str("ok")}, 2},                                   // name: any case
		{uia.Target{Name: str("OK"), ControlType: str("button")}, 2},       // control type: canonical
		{uia.Target{AutomationID: str("OK1")}, 0},                          // automation id: exact case
		{uia.Target{AutomationID: str("ok1")}, 1},                          //
		{uia.Target{Name: str("O")}, 0},                                    // no substring match
		{uia.Target{ControlType: str("ControlType.Button")}, 4},            //
		{uia.Target{ControlType: str("Button"), Name: str("Print")}, 1},    //
		{uia.Target{AutomationID: str("go"), ControlType: str("Edit")}, 0}, // all fields must match
	}
	for _, tc := range cases {
		q, err := s.Query(t.Context(), uia.Input{Target: &tc.target})
		if err != nil {
			t.Fatal(err)
		}
		if q.MatchCount != tc.want || len(q.Matches) != tc.want {
			t.Errorf("target %+v: %d matches, want %d", tc.target, q.MatchCount, tc.want)
		}
	}
	if _, err := s.Query(t.Context(), uia.Input{Target: &uia.Target{}}); code(err) != "failed/invalid_input" || !strings.Contains(err.Error(), `"target"`) {
		t.Fatalf("empty target: %v", err)
	}
}

func TestActionNeedsExactlyOneMatch(t *testing.T) {
	f := notepad()
	s := newService(t, f)
	_, err := s.Action(t.Context(), uia.Input{Action: uia.ActInvoke, Target: &uia.Target{Name: str("OK")}})
	var pe *primitive.Error
	if !errors.As(err, &pe) || pe.State != primitive.StateConflict || pe.Code != "ambiguous_target" {
		t.Fatalf("two matches: %v", err)
	}
	cands, _ := pe.Details["candidates"].([]map[string]any)
	if len(cands) != 2 || cands[0]["locator"] != "n7" || cands[1]["locator"] != "n8" || !strings.Contains(pe.Message, "n7, n8") {
		t.Fatalf("the conflict must list the candidates' locators: %s %v", pe.Message, pe.Details)
	}
	_, err = s.Action(t.Context(), uia.Input{Action: uia.ActInvoke, Target: &uia.Target{Name: str("Cancel")}})
	if code(err) != "conflict/no_match" {
		t.Fatalf("no match: %v", err)
	}
	_, err = s.Action(t.Context(), uia.Input{Action: uia.ActInvoke, Target: &uia.Target{Name: str("Cancel")}, MaxDepth: num(1)})
	if code(err) != "conflict/no_match" || !strings.Contains(err.Error(), "max_depth") {
		t.Fatalf("no match within cut bounds must say so: %v", err)
	}
	if len(f.Actions()) != 0 {
		t.Fatalf("nothing may be done on a conflict: %v", f.Actions())
	}
}

func TestSemanticActions(t *testing.T) {
	f := notepad()
	s := newService(t, f)
	res, err := s.Action(t.Context(), uia.Input{Action: uia.ActInvoke, Target: &uia.Target{AutomationID: str("ok1")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Element.Locator != "n7" || res.Fallback || res.Element.Name != "OK" {
		t.Fatalf("invoke: %+v", res)
	}
	res, err = s.Action(t.Context(), uia.Input{Action: uia.ActSetValue, Value: str("new text"), Target: &uia.Target{AutomationID: str("body")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ValueAfter == nil || *res.ValueAfter != "new text" || *res.Element.Value != "hello" {
		t.Fatalf("set_value: %+v", res)
	}
	if _, err := s.Action(t.Context(), uia.Input{Action: uia.ActFocus, Target: &uia.Target{AutomationID: str("body")}}); err != nil {
		t.Fatal(err)
	}
	got := f.Actions()
	if len(got) != 3 || got[0] != (uiatest.FakeAction{Action: "invoke", AutomationID: "ok1"}) || got[1].Value != "new text" || got[2].Action != "focus" {
		t.Fatalf("actions: %+v", got)
	}
	// Refusals that send nothing.
	for _, tc := range []struct {
		in   uia.Input
		want string
	}{
		{uia.Input{Action: uia.ActInvoke, Target: &uia.Target{AutomationID: str("body")}}, "conflict/pattern_unsupported"},
		{uia.Input{Action: uia.ActSetValue, Value: str("x"), Target: &uia.Target{AutomationID: str("ok1")}}, "conflict/pattern_unsupported"},
		{uia.Input{Action: uia.ActInvoke, Target: &uia.Target{AutomationID: str("print")}}, "conflict/element_disabled"},
		{uia.Input{Action: uia.ActInvoke, HWND: 12345, Target: &uia.Target{AutomationID: str("ok1")}}, "failed/not_found"},
	} {
		if _, err := s.Action(t.Context(), tc.in); code(err) != tc.want {
			t.Errorf("%+v: %v, want %s", tc.in, err, tc.want)
		}
	}
	if len(f.Actions()) != 3 {
		t.Fatalf("a refused action ran: %+v", f.Actions())
	}
}

func TestFallbackPolicy(t *testing.T) {
	f := notepad()
	s := newService(t, f)
	ok1 := &uia.Target{AutomationID: str("ok1")}
	cases := []struct {
		name  string
		in    uia.Input
		want  string
		field string
	}{
		{"click without opt-in", uia.Input{Action: uia.ActClick, HWND: 7, Target: ok1}, "blocked/fallback_refused", `"allow_fallback"`},
		{"key without opt-in", uia.Input{Action: uia.ActKey, VirtualKey: num(13), ProcessID: 100, Target: ok1}, "blocked/fallback_refused", `"allow_fallback"`},
		{"click unscoped", uia.Input{Action: uia.ActClick, AllowFallback: true, Target: ok1}, "blocked/fallback_refused", `"hwnd"`},
		{"key unscoped", uia.Input{Action: uia.ActKey, VirtualKey: num(13), AllowFallback: true, Target: ok1}, "blocked/fallback_refused", `"process_id"`},
		{"key without virtual_key", uia.Input{Action: uia.ActKey, AllowFallback: true, HWND: 7, Target: ok1}, "failed/invalid_input", `"virtual_key"`},
		{"virtual_key with click", uia.Input{Action: uia.ActClick, VirtualKey: num(13), AllowFallback: true, HWND: 7, Target: ok1}, "failed/invalid_input", `"virtual_key"`},
		{"value with invoke", uia.Input{Action: uia.ActInvoke, Value: str("x"), Target: ok1}, "failed/invalid_input", `"value"`},
		{"set_value without value", uia.Input{Action: uia.ActSetValue, Target: ok1}, "failed/invalid_input", `"value"`},
		{"two roots", uia.Input{Action: uia.ActInvoke, HWND: 7, ProcessID: 100, Target: ok1}, "failed/invalid_input", `"process_id"`},
		{"fallback without target", uia.Input{Action: uia.ActClick, AllowFallback: true, HWND: 7, Target: &uia.Target{}}, "failed/invalid_input", `"target"`},
	}
	for _, tc := range cases {
		_, err := s.Action(t.Context(), tc.in)
		if code(err) != tc.want || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v, want %s naming %s", tc.name, err, tc.want, tc.field)
		}
		if uia.NeedsPermit(&tc.in) != (tc.in.AllowFallback && uia.IsFallback(tc.in.Action)) {
			t.Errorf("%s: NeedsPermit", tc.name)
		}
	}
	if len(f.Actions()) != 0 {
		t.Fatalf("refused fallback sent input: %+v", f.Actions())
	}
	res, err := s.Action(t.Context(), uia.Input{Action: uia.ActClick, AllowFallback: true, HWND: 7, Target: ok1})
	if err != nil || !res.Fallback {
		t.Fatalf("scoped, opted-in click: %+v %v", res, err)
	}
	if _, err := s.Action(t.Context(), uia.Input{Action: uia.ActKey, VirtualKey: num(13), AllowFallback: true, ProcessID: 100, Target: &uia.Target{AutomationID: str("body")}}); err != nil {
		t.Fatal(err)
	}
	got := f.Actions()
	if len(got) != 2 || got[0].Scope != (uia.Scope{HWND: 7}) || got[1].VirtualKey != 13 || got[1].Scope != (uia.Scope{ProcessID: 100}) {
		t.Fatalf("fallback input must carry its scope: %+v", got)
	}
	// The target must lie under the scope: process 100 has no "go".
	if _, err := s.Action(t.Context(), uia.Input{Action: uia.ActClick, AllowFallback: true, ProcessID: 100, Target: &uia.Target{AutomationID: str("go")}}); code(err) != "conflict/no_match" {
		t.Fatalf("target outside the scope: %v", err)
	}
	f.NotForeground = true
	if _, err := s.Action(t.Context(), uia.Input{Action: uia.ActClick, AllowFallback: true, HWND: 7, Target: ok1}); code(err) != "blocked/not_foreground" {
		t.Fatalf("window not in the foreground: %v", err)
	}
	if len(f.Actions()) != 2 {
		t.Fatalf("input sent although the window was not in front: %+v", f.Actions())
	}
	// Invoke is semantic: allow_fallback does not make it need a permit.
	if uia.NeedsPermit(&uia.Input{Action: uia.ActInvoke, AllowFallback: true}) {
		t.Fatal("semantic invoke must not need a permit")
	}
}

func TestElevatedTargetIsBlocked(t *testing.T) {
	f := notepad()
	f.ElevatedPIDs = map[int]bool{200: true}
	s := newService(t, f)
	for _, in := range []uia.Input{
		{Action: uia.ActInvoke, Target: &uia.Target{AutomationID: str("go")}},
		{Action: uia.ActFocus, Target: &uia.Target{AutomationID: str("go")}},
		{Action: uia.ActClick, AllowFallback: true, ProcessID: 200, Target: &uia.Target{AutomationID: str("go")}},
	} {
		_, err := s.Action(t.Context(), in)
		var pe *primitive.Error
		if !errors.As(err, &pe) || pe.State != "blocked" || pe.Code != "elevated" || pe.Details["reason"] != "elevated target" {
			t.Fatalf("%s on an elevated process: %v", in.Action, err)
		}
	}
	if len(f.Actions()) != 0 {
		t.Fatalf("input reached an elevated process: %+v", f.Actions())
	}
	// Reading it is not input.
	if _, err := s.Query(t.Context(), uia.Input{ProcessID: 200, Target: &uia.Target{AutomationID: str("go")}}); err != nil {
		t.Fatal(err)
	}
}

func TestNoInteractiveDesktopIsBlocked(t *testing.T) {
	f := notepad()
	f.NoDesktop = errors.New("the workstation is locked")
	s := newService(t, f)
	_, err1 := s.Snapshot(t.Context(), uia.Input{})
	_, err2 := s.Action(t.Context(), uia.Input{Action: uia.ActInvoke, Target: &uia.Target{AutomationID: str("ok1")}})
	for _, err := range []error{err1, err2} {
		if code(err) != "blocked/no_interactive_desktop" || !strings.Contains(err.Error(), "locked") {
			t.Fatalf("no desktop: %v", err)
		}
	}
	if len(f.Actions()) != 0 {
		t.Fatal("input sent without an interactive desktop")
	}
}

// TestUACPromptBlocksFallbackInput: a UAC prompt that comes up after the
// walk (the second desktop check, right before input) blocks a fallback
// click and key with secure_desktop and the reason in plain words; no
// input reaches the provider.
func TestUACPromptBlocksFallbackInput(t *testing.T) {
	uac := screen.DecideInputDesktop(screen.DesktopProbe{Name: "Winlogon"})
	for _, in := range []uia.Input{
		{Action: uia.ActClick, AllowFallback: true, HWND: 7, Target: &uia.Target{AutomationID: str("ok1")}},
		{Action: uia.ActKey, VirtualKey: num(13), AllowFallback: true, HWND: 7, Target: &uia.Target{AutomationID: str("body")}},
	} {
		f := notepad()
		f.NoDesktop, f.NoDesktopFrom = uac, 2
		s := newService(t, f)
		_, err := s.Action(t.Context(), in)
		if code(err) != "blocked/secure_desktop" || !strings.Contains(err.Error(), "User Account Control") || !strings.Contains(err.Error(), "no input sent") {
			t.Fatalf("%s under a UAC prompt: %v", in.Action, err)
		}
		if len(f.Actions()) != 0 {
			t.Fatalf("%s reached the provider under a UAC prompt: %+v", in.Action, f.Actions())
		}
		// Without the prompt the same input goes through.
		f2 := notepad()
		if _, err := newService(t, f2).Action(t.Context(), in); err != nil || len(f2.Actions()) != 1 {
			t.Fatalf("%s without a prompt: %v, %+v", in.Action, err, f2.Actions())
		}
	}
}

func TestUnavailableProvider(t *testing.T) {
	f := &uiatest.FakeProvider{OpenErr: errors.New(uia.Unavailable)}
	s := newService(t, f)
	_, err := s.Snapshot(t.Context(), uia.Input{})
	var pe *primitive.Error
	if !errors.As(err, &pe) || pe.State != "blocked" || pe.Code != "unavailable" || pe.Details["reason"] != uia.Unavailable {
		t.Fatalf("unavailable: %v", err)
	}
	if err := s.Available(t.Context()); err == nil || err.Error() != uia.Unavailable {
		t.Fatalf("Available: %v", err)
	}
	// Once found missing, calls are refused without reaching the provider,
	// and fallback input asks the operator for no permit it cannot use.
	calls := f.Calls()
	if _, err := s.Action(t.Context(), uia.Input{Action: uia.ActInvoke, Target: &uia.Target{Name: str("OK")}}); code(err) != "blocked/unavailable" {
		t.Fatalf("action on a host without UI Automation: %v", err)
	}
	if f.Calls() != calls {
		t.Fatal("a call reached the provider after it was found unavailable")
	}
	spec := s.Specs()[2]
	if spec.NeedsPermit(json.RawMessage(`{"action":"click","allow_fallback":true,"hwnd":7,"target":{"name":"OK"}}`)) {
		t.Fatal("no permit is asked for input that cannot be sent on this host")
	}
	if err := newService(t, notepad()).Available(t.Context()); err != nil {
		t.Fatalf("Available with a working provider: %v", err)
	}
}

// TestSerialized runs many calls at once: the provider never sees two at
// a time, every reference is released, and a full queue answers busy.
func TestSerialized(t *testing.T) {
	f := notepad()
	f.CallDelay = 100 * time.Microsecond
	s := &uia.Service{Provider: f, QueueSize: 64}
	t.Cleanup(s.Close)
	var wg sync.WaitGroup
	errs := make(chan error, 48)
	for i := range 48 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			switch i % 3 {
			case 0:
				_, err = s.Snapshot(context.Background(), uia.Input{})
			case 1:
				_, err = s.Query(context.Background(), uia.Input{Target: &uia.Target{Name: str("ok")}})
			default:
				_, err = s.Action(context.Background(), uia.Input{Action: uia.ActInvoke, Target: &uia.Target{AutomationID: str("ok2")}})
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if f.Overlaps() != 0 {
		t.Fatalf("%d provider calls overlapped", f.Overlaps())
	}
	if f.Outstanding() != 0 || len(f.Actions()) != 16 || f.Opens() != 1 {
		t.Fatalf("outstanding %d, actions %d, opens %d", f.Outstanding(), len(f.Actions()), f.Opens())
	}

	slow := notepad()
	slow.CallDelay = 20 * time.Millisecond
	b := &uia.Service{Provider: slow, QueueSize: 1}
	t.Cleanup(b.Close)
	results := make(chan error, 6)
	for range 6 {
		go func() { _, err := b.Snapshot(context.Background(), uia.Input{MaxNodes: num(2)}); results <- err }()
		time.Sleep(5 * time.Millisecond)
	}
	busy := 0
	for range 6 {
		if err := <-results; code(err) == "blocked/busy" {
			busy++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if busy == 0 {
		t.Fatal("a full queue must answer busy")
	}
}

func TestCancelledCallSendsNothing(t *testing.T) {
	f := notepad()
	f.CallDelay = 10 * time.Millisecond
	s := newService(t, f)
	// Occupy the worker, then queue an action whose context ends first.
	busy := make(chan error, 1)
	go func() { _, err := s.Snapshot(context.Background(), uia.Input{}); busy <- err }()
	time.Sleep(5 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := s.Action(ctx, uia.Input{Action: uia.ActInvoke, Target: &uia.Target{AutomationID: str("ok1")}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled: %v", err)
	}
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	// The worker reaches the action after the snapshot and skips it.
	if _, err := s.Snapshot(context.Background(), uia.Input{MaxNodes: num(1)}); err != nil {
		t.Fatal(err)
	}
	if len(f.Actions()) != 0 {
		t.Fatalf("a cancelled action ran later: %+v", f.Actions())
	}
}

func TestWorkerStopsWhenIdle(t *testing.T) {
	f := notepad()
	s := &uia.Service{Provider: f, IdleExit: 20 * time.Millisecond}
	t.Cleanup(s.Close)
	if _, err := s.Snapshot(t.Context(), uia.Input{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := s.Snapshot(t.Context(), uia.Input{}); err != nil {
		t.Fatal(err)
	}
	if f.Opens() != 2 {
		t.Fatalf("an idle worker closes its provider and a new call opens it again: %d opens", f.Opens())
	}
	s.Close()
	if _, err := s.Snapshot(t.Context(), uia.Input{}); code(err) != "blocked/unavailable" {
		t.Fatalf("after Close: %v", err)
	}
}

// TestSchema checks the advertised fields through the registry's strict
// decoding, so that errors name the field.
func TestSchema(t *testing.T) {
	s := newService(t, notepad())
	reg, err := primitive.NewRegistry(s.Specs()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args string
		want string
	}{
		{`{"operation":"snapshot","max_depth":13}`, `"max_depth": must be at most 12`},
		{`{"operation":"snapshot","max_nodes":5001}`, `"max_nodes": must be at most 5000`},
		{`{"operation":"snapshot","target":{"name":"x"}}`, `"target": unknown field`},
		{`{"operation":"query"}`, `"target": required`},
		{`{"operation":"query","target":{"title":"x"}}`, `"target.title": unknown key`},
		{`{"operation":"action","target":{"name":"x"}}`, `"action": required`},
		{`{"operation":"action","target":{"name":"x"},"action":"drag"}`, `"drag" is not one of invoke, focus, set_value, click, key`},
		{`{"operation":"action","target":{"name":"x"},"action":"key","virtual_key":300}`, `"virtual_key": must be at most 254`},
		{`{"operation":"action","target":{"name":"x"},"action":"click","allow_fallback":"yes"}`, `"allow_fallback": must be true or false`},
		{`{"operation":"snapshot","hwnd":-1}`, `"hwnd": must be at least 1`},
	} {
		_, _, _, err := reg.Decode("ui", json.RawMessage(tc.args))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.args, err, tc.want)
		}
	}
	sch, _ := json.Marshal(reg.ToolSchema("ui"))
	t.Logf("ui schema: %d bytes; description: %d bytes", len(sch), len(reg.ToolDescription("ui", "")))
	spec, _ := reg.Lookup("ui.action")
	if spec.Risk != primitive.RiskUI || spec.NeedsPermit == nil {
		t.Fatal("ui.action must be risk ui with a NeedsPermit hook")
	}
	for raw, want := range map[string]bool{
		`{"action":"click","allow_fallback":true,"hwnd":7,"target":{"name":"x"}}`: true,
		`{"action":"key","allow_fallback":true,"hwnd":7,"virtual_key":13}`:        true,
		`{"action":"invoke","allow_fallback":true,"target":{"name":"x"}}`:         false,
		`{"action":"set_value","value":"x","target":{"name":"x"}}`:                false,
	} {
		if spec.NeedsPermit(json.RawMessage(raw)) != want {
			t.Errorf("NeedsPermit(%s) != %v", raw, want)
		}
	}
	// Precheck refuses what no permit could make run, and lets sample
	// input through to governance (an e-stop must answer estop).
	if err := spec.Precheck(json.RawMessage(`{"action":"click","target":{"name":"x"}}`)); code(err) != "blocked/fallback_refused" {
		t.Fatalf("precheck: %v", err)
	}
	if err := spec.Precheck(json.RawMessage(`{"action":"invoke","target":{}}`)); err != nil {
		t.Fatalf("precheck of sample input: %v", err)
	}
}

// TestOperatorSurfacesRefused: the model cannot drive the control panel
// in a browser (semantic actions need no permit) nor Hearth's own UI.
func TestOperatorSurfacesRefused(t *testing.T) {
	approve := with(el("Button", "Approve once", "approve"), func(p *uia.Props) { p.Patterns = []string{"InvokePattern"}; p.ProcessID = 300 })
	doc := with(el("Document", "Permits · Hearth control panel", "", approve), func(p *uia.Props) { p.ProcessID = 300 })
	browser := with(el("Window", "Permits · Hearth control panel - Browser", "", doc), func(p *uia.Props) { p.HWND = 11; p.ProcessID = 300 })
	self := with(el("Button", "Quit", "quit"), func(p *uia.Props) { p.Patterns = []string{"InvokePattern"}; p.ProcessID = os.Getpid() })
	desk := with(el("Pane", "Desktop", "", browser, self), func(p *uia.Props) { p.ProcessID = 4 })
	f := &uiatest.FakeProvider{Desktop: desk}
	s := newService(t, f)
	for _, name := range []string{"Approve once", "Quit"} {
		_, err := s.Action(t.Context(), uia.Input{Action: uia.ActInvoke, Target: &uia.Target{Name: str(name)}})
		if code(err) != "blocked/operator_surface" {
			t.Errorf("%s: %v", name, code(err))
		}
	}
	if n := len(f.Actions()); n != 0 {
		t.Fatalf("%d actions reached the provider", n)
	}
}

// browserWithPanel is a browser (pid 300) showing the control panel: a
// titled top-level window (hwnd 11) whose inner render widget (hwnd 12)
// holds the page. A walk scoped to hwnd 12 never sees the title.
func browserWithPanel(title string) *uiatest.FakeProvider {
	approve := with(el("Button", "Approve once", "approve"), func(p *uia.Props) { p.Patterns = []string{"InvokePattern"}; p.ProcessID = 300 })
	doc := with(el("Document", "", "", approve), func(p *uia.Props) { p.ProcessID = 300 })
	widget := with(el("Pane", "", "", doc), func(p *uia.Props) { p.HWND = 12; p.ProcessID = 300 })
	browser := with(el("Window", title, "", widget), func(p *uia.Props) { p.HWND = 11; p.ProcessID = 300 })
	desk := with(el("Pane", "Desktop", "", browser), func(p *uia.Props) { p.ProcessID = 4 })
	return &uiatest.FakeProvider{Desktop: desk}
}

// TestOperatorSurfaceThroughInnerWindow: scoping the action to an inner
// child window of the browser does not hide the control panel — the
// child's top-level window is checked.
func TestOperatorSurfaceThroughInnerWindow(t *testing.T) {
	f := browserWithPanel("Permits · Hearth control panel - Browser")
	s := newService(t, f)
	_, err := s.Action(t.Context(), uia.Input{Action: uia.ActInvoke, HWND: 12, Target: &uia.Target{AutomationID: str("approve")}})
	if code(err) != "blocked/operator_surface" || !strings.Contains(err.Error(), "control panel") {
		t.Fatalf("inner window of the panel's browser: %v (%s)", err, code(err))
	}
	if n := len(f.Actions()); n != 0 {
		t.Fatalf("%d actions reached the provider", n)
	}
	// The same page under another title is an ordinary window.
	f = browserWithPanel("Some shop - Browser")
	s = newService(t, f)
	if _, err := s.Action(t.Context(), uia.Input{Action: uia.ActInvoke, HWND: 12, Target: &uia.Target{AutomationID: str("approve")}}); err != nil {
		t.Fatalf("an ordinary page: %v", err)
	}
	if n := len(f.Actions()); n != 1 {
		t.Fatalf("%d actions, want 1", n)
	}
}

// TestOperatorSurfaceByPanelAddress: while a panel page loads, browsers
// title the window with its URL; once the Service knows the panel's
// address, that title is refused too.
func TestOperatorSurfaceByPanelAddress(t *testing.T) {
	in := uia.Input{Action: uia.ActInvoke, HWND: 12, Target: &uia.Target{AutomationID: str("approve")}}
	for _, title := range []string{"127.0.0.1:3901/permits - Browser", "localhost:3901/ - Browser"} {
		f := browserWithPanel(title)
		s := newService(t, f)
		if _, err := s.Action(t.Context(), in); err != nil {
			t.Fatalf("%q before the address is known: %v", title, err)
		}
		s.SetPanelAddr("127.0.0.1:3901")
		if _, err := s.Action(t.Context(), in); code(err) != "blocked/operator_surface" {
			t.Fatalf("%q: %v (%s)", title, err, code(err))
		}
	}
}

// TestOperatorSurfaceUnresolvedWindow: a window whose top-level window
// cannot be resolved is refused, never assumed safe.
func TestOperatorSurfaceUnresolvedWindow(t *testing.T) {
	f := browserWithPanel("Some shop - Browser")
	f.TopLevelErr = errors.New("access denied")
	s := newService(t, f)
	_, err := s.Action(t.Context(), uia.Input{Action: uia.ActInvoke, HWND: 12, Target: &uia.Target{AutomationID: str("approve")}})
	if code(err) != "blocked/operator_surface" || !strings.Contains(err.Error(), "access denied") {
		t.Fatalf("unresolved top-level window: %v (%s)", err, code(err))
	}
	f.TopLevelErr = fmt.Errorf("gone: %w", uia.ErrNotFound)
	_, err = s.Action(t.Context(), uia.Input{Action: uia.ActInvoke, HWND: 12, Target: &uia.Target{AutomationID: str("approve")}})
	if code(err) != "conflict/element_gone" {
		t.Fatalf("vanished window: %v (%s)", err, code(err))
	}
	if n := len(f.Actions()); n != 0 {
		t.Fatalf("%d actions reached the provider", n)
	}
}
