package selftest

import (
	"os"
	"testing"
)

// TestFixtureWindow makes the fixture windows in this process and drives
// them with their own messages (no UI Automation, which Wine lacks): the
// button's click counter, the edit box's text, the check box, the list's
// items, and the run-unique titles, found exactly once and gone after
// Close.
func TestFixtureWindow(t *testing.T) {
	f := NewFixture("feedf00d")
	w, err := openFixture(f)
	if err != nil {
		if os.Getenv("HEARTH_WINE_WINDOWS") != "" {
			t.Fatalf("the fixture window could not be made although the Wine prefix has a graphics driver: %v", err)
		}
		t.Skipf("no window can be made here: %v", err)
	}
	closed := false
	defer func() {
		if !closed {
			w.Close()
		}
	}()
	s := w.State()
	if s.Clicks != 0 || s.Edit != "" || s.Checked || s.Items != len(ListItems) || s.Selected != -1 {
		t.Fatalf("fresh fixture: %+v", s)
	}
	w.click(IDButton)
	w.click(IDButton)
	if err := w.setText(IDEdit, "hello fixture"); err != nil {
		t.Fatal(err)
	}
	w.check(IDCheckBox, true)
	s = w.State()
	if s.Clicks != 2 || s.Edit != "hello fixture" || !s.Checked || s.PanelClicks != 0 {
		t.Fatalf("after two clicks, a text and a check: %+v", s)
	}
	w.click(IDPanelButton)
	if s = w.State(); s.PanelClicks != 1 || s.Clicks != 2 {
		t.Fatalf("the panel window's button counts on its own: %+v", s)
	}
	for title, want := range map[string]uint64{f.Title: w.HWND(), f.PanelTitle: w.PanelHWND()} {
		hs, err := findWindows(title)
		if err != nil || len(hs) != 1 || hs[0] != want {
			t.Fatalf("windows titled %q: %v %v, want [%d]", title, hs, err, want)
		}
	}
	w.Close()
	closed = true
	for _, title := range []string{f.Title, f.PanelTitle} {
		if hs, _ := findWindows(title); len(hs) != 0 {
			t.Fatalf("windows titled %q after Close: %v", title, hs)
		}
	}
	// A second fixture in the same process registers its class again.
	w2, err := openFixture(NewFixture("0badcafe"))
	if err != nil {
		t.Fatalf("a second fixture after Close: %v", err)
	}
	w2.Close()
}
