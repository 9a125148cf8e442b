package selftest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/selftestreport"
	"github.com/hearth-dev/hearth/internal/uia"
	"github.com/hearth-dev/hearth/internal/uia/uiatest"
)

// No Windows desktop exists here, so these tests run the ui checks, through
// the real temporary Hearth and its MCP endpoint, against a named fake:
// uiatest.FakeProvider holding the fixture's tree, and a fixture state read
// from the actions the fake performed.

const (
	fakeMainHWND  = 7
	fakePanelHWND = 8
	fakePID       = 4100
)

// fakeFixtureDesktop is the desktop UI Automation would show with the
// run's fixture windows open.
func fakeFixtureDesktop(f Fixture) *uiatest.FakeProvider {
	el := func(ct, name, id string, b uia.Bounds, pats ...string) *uiatest.FakeElement {
		return &uiatest.FakeElement{Props: uia.Props{ControlType: ct, Name: name, AutomationID: id, ProcessID: fakePID, Enabled: true, Bounds: b, Patterns: pats}}
	}
	win := el("Window", f.Title, "", uia.Bounds{X: 40, Y: 40, W: f.W, H: f.H})
	win.HWND = fakeMainHWND
	for _, c := range f.Controls {
		b := uia.Bounds{X: 48 + c.X, Y: 70 + c.Y, W: c.W, H: c.H}
		var e *uiatest.FakeElement
		switch c.ControlType {
		case "Button":
			e = el("Button", c.Text, c.AutomationID(), b, "invoke")
		case "Edit":
			e = el("Edit", "", c.AutomationID(), b, "value")
			empty := ""
			e.Value = &empty
		case "CheckBox":
			e = el("CheckBox", c.Text, c.AutomationID(), b, "toggle")
		case "List":
			e = el("List", "", c.AutomationID(), b, "selection")
			for i, it := range ListItems {
				e.Children = append(e.Children, el("ListItem", it, "", uia.Bounds{X: b.X + 1, Y: b.Y + 1 + 16*i, W: b.W - 2, H: 16}, "selection_item"))
			}
		}
		win.Children = append(win.Children, e)
	}
	panel := el("Window", f.PanelTitle, "", uia.Bounds{X: 480, Y: 40, W: 260, H: 140})
	panel.HWND = fakePanelHWND
	panel.Children = []*uiatest.FakeElement{el("Button", f.Panel.Text, f.Panel.AutomationID(), uia.Bounds{X: 490, Y: 70, W: 120, H: 30}, "invoke")}
	desk := el("Pane", "Desktop", "", uia.Bounds{W: 1920, H: 1080})
	desk.Children = []*uiatest.FakeElement{win, panel}
	return &uiatest.FakeProvider{Desktop: desk}
}

// fakeState is what the fixture window would report after the fake's
// actions; deaf drops the actions of one automation id, as a window that
// ignores them would.
func fakeState(p *uiatest.FakeProvider, deaf string) func() (State, error) {
	return func() (State, error) {
		s := State{Items: len(ListItems), Selected: -1}
		for _, a := range p.Actions() {
			if a.AutomationID == deaf {
				continue
			}
			switch {
			case a.Action == uia.ActInvoke && a.AutomationID == "101":
				s.Clicks++
			case a.Action == uia.ActInvoke && a.AutomationID == "201":
				s.PanelClicks++
			case a.Action == uia.ActSetValue && a.AutomationID == "102":
				s.Edit = a.Value
			case a.Action == uia.ActFocus:
				s.Focus = atoi(a.AutomationID)
			case a.Action == uia.ActClick && a.AutomationID == "103":
				s.Checked = !s.Checked
				s.Focus = 103
			case a.Action == uia.ActKey && a.AutomationID == "102" && a.VirtualKey == vkA:
				s.Edit += "a"
				s.Focus = 102
			}
		}
		return s, nil
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// uiChecks is the ui part of the check list, after the Hearth start.
func uiChecks(r *run) []check {
	var out []check
	for _, c := range r.checks() {
		if c.name == "hearth.start" || strings.HasPrefix(c.name, "uia.") {
			out = append(out, c)
		}
	}
	return out
}

func runFakeUI(t *testing.T, deaf string) (*selftestreport.Report, *uiatest.FakeProvider, string) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	f := NewFixture("fa4efa4e")
	p := fakeFixtureDesktop(f)
	var stdout bytes.Buffer
	rep, _ := Run(context.Background(), Options{Stdout: &stdout, Version: "test", checks: uiChecks, uiProvider: p,
		fixture: func(r *run) (*fixtureProc, error) {
			// The fake desktop shows fixture fa4efa4e whatever the run's id.
			return &fixtureProc{ready: Ready{HWND: fakeMainHWND, PanelHWND: fakePanelHWND, PID: fakePID}, model: f, stateOf: fakeState(p, deaf)}, nil
		}})
	return rep, p, stdout.String()
}

// TestUIChecksFakeDesktop: against a desktop that behaves, every ui check
// passes but the elevated one (skipped: it needs a UAC prompt); the
// fallback click and key ran only once the selftest approved their
// permits; the panel-titled window's button was never pressed.
func TestUIChecksFakeDesktop(t *testing.T) {
	rep, p, out := runFakeUI(t, "")
	t.Logf("selftest output:\n%s", out)
	for _, c := range rep.Checks {
		want := selftestreport.OK
		if c.Name == "uia.elevated" {
			want = selftestreport.Skipped
		}
		if c.Status != want {
			t.Errorf("%s: %s %s, want %s\n%s", c.Name, c.Status, c.Detail, want, out)
		}
	}
	var kinds []string
	for _, a := range p.Actions() {
		kinds = append(kinds, a.Action+":"+a.AutomationID)
		if a.AutomationID == "201" {
			t.Errorf("the panel-titled window's button got %s", a.Action)
		}
		if uia.IsFallback(a.Action) && a.Scope.HWND != fakeMainHWND {
			t.Errorf("fallback %s scoped to %+v, want the fixture window", a.Action, a.Scope)
		}
	}
	if got := strings.Join(kinds, " "); got != "invoke:101 set_value:102 focus:103 click:103 key:102" {
		t.Errorf("the provider saw %s", got)
	}
	if p.Overlaps() != 0 {
		t.Errorf("%d provider calls overlapped", p.Overlaps())
	}
}

// TestUIChecksFailWhenTheWindowDoesNotChange: a button whose clicks never
// reach the window fails uia.invoke, saying what the window reports.
func TestUIChecksFailWhenTheWindowDoesNotChange(t *testing.T) {
	rep, _, out := runFakeUI(t, "101")
	for _, c := range rep.Checks {
		if c.Name == "uia.invoke" && (c.Status != selftestreport.Fail || !strings.Contains(c.Detail, "after invoke")) {
			t.Fatalf("uia.invoke: %s %s\n%s", c.Status, c.Detail, out)
		}
	}
}
