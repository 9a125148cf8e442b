package tray

import "testing"

// TestRenderUpdateEntry: the update entry is hidden while no update is
// offered; with one it names the version (without a leading v) and opens
// the Status page, where the update card and its Update button are.
func TestRenderUpdateEntry(t *testing.T) {
	if e := Render(ready()).Entries[ItemUpdate]; !e.Hidden || e.Action != ActNone {
		t.Fatalf("no update: %+v", e)
	}
	s := ready()
	s.Update = "v1.4.0"
	e := Render(s).Entries[ItemUpdate]
	if e.Hidden || e.Title != "Update to 1.4.0 — what changed" || e.Action != ActOpenPanel || e.Page != "/" {
		t.Fatalf("update offered: %+v", e)
	}
}
