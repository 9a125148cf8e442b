package selftest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hearth-dev/hearth/internal/uia"
)

// The fixture window is the ui checks' target: a plain Win32 window in a
// child process (Hearth refuses to drive its own process's windows), with
// one control of each kind the checks use, and a second window titled like
// the control panel, which every ui action must refuse. This file is its
// model, portable and tested everywhere: what the window holds, how UI
// Automation must show it, and the line protocol the child answers on.

// Control is one child control of the fixture window.
type Control struct {
	// ID is the Win32 control id, which UI Automation reports as the
	// control's automation id.
	ID int
	// Class is the Win32 window class; Style its class-specific styles.
	Class string
	Style uint32
	Text  string
	// ControlType is what UI Automation must call it.
	ControlType string
	X, Y, W, H  int
}

// AutomationID is the automation id UI Automation gives a Win32 control:
// its control id in decimal.
func (c Control) AutomationID() string { return strconv.Itoa(c.ID) }

// Control ids.
const (
	IDButton      = 101
	IDEdit        = 102
	IDCheckBox    = 103
	IDList        = 104
	IDPanelButton = 201
)

// Win32 class styles the controls use.
const (
	bsPushButton   = 0x0
	bsAutoCheckBox = 0x3
	bsNotify       = 0x4000
	esAutoHScroll  = 0x80
	lbsNotify      = 0x1
	wsBorder       = 0x00800000
	wsTabStop      = 0x00010000
)

// ListItems are the list box's items.
var ListItems = []string{"alpha", "beta", "gamma"}

// Fixture is the model of one run's fixture windows.
type Fixture struct {
	Title      string
	PanelTitle string
	Controls   []Control
	// Panel is the one button of the panel-titled window.
	Panel Control
	// W and H are the main window's size.
	W, H int
}

// FixtureTitle is a run's fixture window title: unique to the run, so the
// checks and the leftover test find exactly its window.
func FixtureTitle(id string) string { return "Hearth selftest fixture " + id }

// PanelFixtureTitle is the title of the run's window that looks like the
// control panel to Hearth's operator-surface check.
func PanelFixtureTitle(id string) string {
	return "Status · " + uia.PanelTitle + " · selftest " + id
}

// NewFixture is the fixture of run id.
func NewFixture(id string) Fixture {
	return Fixture{
		Title:      FixtureTitle(id),
		PanelTitle: PanelFixtureTitle(id),
		W:          420, H: 300,
		Controls: []Control{
			{ID: IDButton, Class: "BUTTON", Style: bsPushButton | bsNotify | wsTabStop, Text: "Count", ControlType: "Button", X: 16, Y: 16, W: 120, H: 30},
			{ID: IDEdit, Class: "EDIT", Style: esAutoHScroll | wsBorder | wsTabStop, Text: "", ControlType: "Edit", X: 16, Y: 60, W: 240, H: 26},
			{ID: IDCheckBox, Class: "BUTTON", Style: bsAutoCheckBox | bsNotify | wsTabStop, Text: "Selftest option", ControlType: "CheckBox", X: 16, Y: 100, W: 200, H: 26},
			{ID: IDList, Class: "LISTBOX", Style: lbsNotify | wsBorder | wsTabStop, Text: "", ControlType: "List", X: 16, Y: 140, W: 200, H: 90},
		},
		Panel: Control{ID: IDPanelButton, Class: "BUTTON", Style: bsPushButton | bsNotify | wsTabStop, Text: "Approve", ControlType: "Button", X: 16, Y: 16, W: 120, H: 30},
	}
}

// Control returns the control with id.
func (f Fixture) Control(id int) (Control, bool) {
	i := slices.IndexFunc(f.Controls, func(c Control) bool { return c.ID == id })
	if i < 0 {
		return Control{}, false
	}
	return f.Controls[i], true
}

// State is what the child reports of its windows.
type State struct {
	Clicks      int    `json:"clicks"`
	PanelClicks int    `json:"panel_clicks"`
	Edit        string `json:"edit"`
	Checked     bool   `json:"checked"`
	// Focus is the control id that last took the keyboard focus (0: none).
	Focus    int `json:"focus"`
	Items    int `json:"items"`
	Selected int `json:"selected"`
}

// Ready is the child's first line: its windows are up (or Error says why
// not).
type Ready struct {
	HWND      uint64 `json:"hwnd,omitempty"`
	PanelHWND uint64 `json:"panel_hwnd,omitempty"`
	PID       int    `json:"pid,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Commands the fixture child reads, one a line; each is answered with one
// JSON line (State for "state"). End of input or "quit" closes the windows
// and ends the child.
const (
	CmdState = "state"
	CmdQuit  = "quit"
)

// ParseReady decodes the child's first line.
func ParseReady(line []byte) (Ready, error) {
	var r Ready
	if err := json.Unmarshal(line, &r); err != nil {
		return Ready{}, fmt.Errorf("the fixture's first line is not its ready answer: %.120q", line)
	}
	if r.Error != "" {
		return r, fmt.Errorf("the fixture window could not be made: %s", r.Error)
	}
	if r.HWND == 0 || r.PanelHWND == 0 || r.PID == 0 {
		return r, fmt.Errorf("the fixture's ready answer lacks a window or pid: %s", line)
	}
	return r, nil
}

// CheckTree verifies a ui.snapshot of the fixture window: the root is the
// window with the run's title and process; each control is there exactly
// once with its control type, its automation id and bounds inside the
// window; the list holds its items; and locators are unique. It returns a
// one-line summary of what it found.
func (f Fixture) CheckTree(roots []*uia.Node, pid int) (string, error) {
	if len(roots) != 1 {
		return "", fmt.Errorf("%d roots, want the one fixture window", len(roots))
	}
	root := roots[0]
	if root.Name != f.Title || root.ControlType != "Window" || root.ProcessID != pid {
		return "", fmt.Errorf("root is %s %q of process %d, want Window %q of process %d", root.ControlType, root.Name, root.ProcessID, f.Title, pid)
	}
	if root.Bounds.Empty() {
		return "", fmt.Errorf("the window has no bounds: %+v", root.Bounds)
	}
	var all []*uia.Node
	var walk func(n *uia.Node)
	walk = func(n *uia.Node) {
		all = append(all, n)
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	seen := map[string]bool{}
	for _, n := range all {
		if n.Locator == "" || seen[n.Locator] {
			return "", fmt.Errorf("locator %q is empty or not unique", n.Locator)
		}
		seen[n.Locator] = true
	}
	var found []string
	for _, c := range f.Controls {
		var hits []*uia.Node
		for _, n := range all {
			if n.AutomationID == c.AutomationID() {
				hits = append(hits, n)
			}
		}
		if len(hits) != 1 {
			return "", fmt.Errorf("%d elements with automation id %s (%s %q), want 1", len(hits), c.AutomationID(), c.ControlType, c.Text)
		}
		n := hits[0]
		if n.ControlType != c.ControlType {
			return "", fmt.Errorf("control %s (%q) is a %s, want %s", c.AutomationID(), c.Text, n.ControlType, c.ControlType)
		}
		if c.Text != "" && n.Name != c.Text {
			return "", fmt.Errorf("control %s is named %q, want %q", c.AutomationID(), n.Name, c.Text)
		}
		if !inside(n.Bounds, root.Bounds) {
			return "", fmt.Errorf("control %s has bounds %+v outside the window's %+v", c.AutomationID(), n.Bounds, root.Bounds)
		}
		if c.ControlType == "List" {
			var items []string
			for _, ch := range n.Children {
				if ch.ControlType == "ListItem" {
					items = append(items, ch.Name)
				}
			}
			if !slices.Equal(items, ListItems) {
				return "", fmt.Errorf("the list's items are %q, want %q", items, ListItems)
			}
		}
		found = append(found, fmt.Sprintf("%s %s", c.ControlType, n.Locator))
	}
	return fmt.Sprintf("%d nodes; %s; list items %s", len(all), strings.Join(found, ", "), strings.Join(ListItems, "/")), nil
}

// inside reports whether a has area and lies within b.
func inside(a, b uia.Bounds) bool {
	return !a.Empty() && a.X >= b.X && a.Y >= b.Y && a.X+a.W <= b.X+b.W && a.Y+a.H <= b.Y+b.H
}
