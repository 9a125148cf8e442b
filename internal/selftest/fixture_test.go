package selftest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/uia"
)

// fixtureTree is the tree UI Automation shows of a fixture window: the
// window (with a title bar, as Windows adds) holding each control, the
// list holding its items.
func fixtureTree(f Fixture, pid int) []*uia.Node {
	n := 0
	node := func(ct, name, id string, b uia.Bounds) *uia.Node {
		n++
		return &uia.Node{Locator: fmt.Sprintf("n%d", n), ControlType: ct, Name: name, AutomationID: id, ProcessID: pid, Bounds: b}
	}
	win := node("Window", f.Title, "", uia.Bounds{X: 40, Y: 40, W: f.W, H: f.H})
	win.Children = append(win.Children, node("TitleBar", "", "TitleBar", uia.Bounds{X: 41, Y: 41, W: f.W - 2, H: 20}))
	for _, c := range f.Controls {
		cn := node(c.ControlType, c.Text, c.AutomationID(), uia.Bounds{X: 48 + c.X, Y: 70 + c.Y, W: c.W, H: c.H})
		if c.ControlType == "List" {
			for i, it := range ListItems {
				cn.Children = append(cn.Children, node("ListItem", it, "", uia.Bounds{X: cn.Bounds.X + 1, Y: cn.Bounds.Y + 1 + 16*i, W: c.W - 2, H: 16}))
			}
		}
		win.Children = append(win.Children, cn)
	}
	return []*uia.Node{win}
}

func find(roots []*uia.Node, id string) *uia.Node {
	for _, r := range roots {
		if r.AutomationID == id {
			return r
		}
		if n := find(r.Children, id); n != nil {
			return n
		}
	}
	return nil
}

// TestFixtureModel: each run's fixture has titles of its own, the one
// with the run id and the other titled like the control panel (which
// Hearth's operator-surface check recognizes); every control has its own
// id and lies inside the window.
func TestFixtureModel(t *testing.T) {
	a, b := NewFixture("0a1b2c3d"), NewFixture("4e5f6a7b")
	if a.Title == b.Title || !strings.Contains(a.Title, "0a1b2c3d") || a.Title != FixtureTitle("0a1b2c3d") {
		t.Fatalf("titles %q %q", a.Title, b.Title)
	}
	if !strings.Contains(a.PanelTitle, uia.PanelTitle) || strings.Contains(a.Title, uia.PanelTitle) {
		t.Fatalf("only the panel window may look like the control panel: %q / %q", a.Title, a.PanelTitle)
	}
	seen := map[int]bool{a.Panel.ID: true}
	kinds := map[string]bool{}
	for _, c := range a.Controls {
		if seen[c.ID] {
			t.Fatalf("control id %d twice", c.ID)
		}
		seen[c.ID] = true
		kinds[c.ControlType] = true
		if c.X < 0 || c.Y < 0 || c.X+c.W > a.W || c.Y+c.H > a.H {
			t.Errorf("control %d lies outside the %dx%d window", c.ID, a.W, a.H)
		}
	}
	for _, k := range []string{"Button", "Edit", "CheckBox", "List"} {
		if !kinds[k] {
			t.Errorf("the fixture has no %s", k)
		}
	}
	if c, ok := a.Control(IDEdit); !ok || c.AutomationID() != "102" {
		t.Fatalf("Control(IDEdit) = %+v %v", c, ok)
	}
	if _, ok := a.Control(999); ok {
		t.Fatal("Control of an unknown id")
	}
}

// TestCheckTree: the tree UI Automation should show passes; each way it
// could differ is refused naming what differs.
func TestCheckTree(t *testing.T) {
	f := NewFixture("0a1b2c3d")
	const pid = 4242
	sum, err := f.CheckTree(fixtureTree(f, pid), pid)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum, "Button n3") || !strings.Contains(sum, "alpha/beta/gamma") {
		t.Fatalf("summary %q", sum)
	}
	for _, c := range []struct {
		name   string
		change func([]*uia.Node) []*uia.Node
		want   string
	}{
		{"two roots", func(r []*uia.Node) []*uia.Node { return append(r, r[0]) }, "2 roots"},
		{"another window", func(r []*uia.Node) []*uia.Node { r[0].Name = "Untitled - Notepad"; return r }, "root is"},
		{"another process", func(r []*uia.Node) []*uia.Node { r[0].ProcessID = 1; return r }, "of process 1"},
		{"no window bounds", func(r []*uia.Node) []*uia.Node { r[0].Bounds = uia.Bounds{}; return r }, "no bounds"},
		{"missing button", func(r []*uia.Node) []*uia.Node { find(r, "101").AutomationID = ""; return r }, "0 elements with automation id 101"},
		{"button twice", func(r []*uia.Node) []*uia.Node { find(r, "103").AutomationID = "101"; return r }, "2 elements with automation id 101"},
		{"check box as button", func(r []*uia.Node) []*uia.Node { find(r, "103").ControlType = "Button"; return r }, "is a Button, want CheckBox"},
		{"renamed button", func(r []*uia.Node) []*uia.Node { find(r, "101").Name = "OK"; return r }, `named "OK"`},
		{"edit outside", func(r []*uia.Node) []*uia.Node { find(r, "102").Bounds.X = 5000; return r }, "outside the window"},
		{"edit without area", func(r []*uia.Node) []*uia.Node { find(r, "102").Bounds.W = 0; return r }, "outside the window"},
		{"list item missing", func(r []*uia.Node) []*uia.Node { l := find(r, "104"); l.Children = l.Children[:2]; return r }, "the list's items"},
		{"duplicate locator", func(r []*uia.Node) []*uia.Node { find(r, "102").Locator = "n1"; return r }, "not unique"},
	} {
		if _, err := f.CheckTree(c.change(fixtureTree(f, pid)), pid); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestParseReady: the child's first line gives both windows and its pid,
// or the reason it could not make them.
func TestParseReady(t *testing.T) {
	r, err := ParseReady([]byte(`{"hwnd":65552,"panel_hwnd":65560,"pid":77}`))
	if err != nil || r.HWND != 65552 || r.PanelHWND != 65560 || r.PID != 77 {
		t.Fatalf("%+v %v", r, err)
	}
	for line, want := range map[string]string{
		`{"error":"RegisterClassEx: access denied"}`: "could not be made: RegisterClassEx",
		`{"hwnd":1,"pid":2}`:                         "lacks a window",
		`hearth-tray: unknown command`:               "not its ready answer",
	} {
		if _, err := ParseReady([]byte(line)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
}
