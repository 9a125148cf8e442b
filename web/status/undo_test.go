package status

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestUndoLineOnStatus(t *testing.T) {
	now := time.Date(2026, 3, 4, 15, 0, 0, 0, time.Local)
	render := func(u Undo) string {
		var b strings.Builder
		if err := UndoLine(u, now).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	got := render(Undo{Known: true, Bytes: 2 << 20, Budget: 1 << 30, Any: true, Oldest: now.Add(-2 * time.Hour), KeptDays: 30})
	for _, w := range []string{"Changes back to 13:00 can be undone", "2.0 MiB of the 1.0 GiB set aside for them", "undoable for 30 days", `href="/changes"`} {
		if !strings.Contains(got, w) {
			t.Fatalf("the undo line lacks %q: %s", w, got)
		}
	}
	if got := render(Undo{Known: true}); !strings.Contains(got, "Nothing to undo now") || !strings.Contains(got, "no limit set") {
		t.Fatalf("empty undo line: %s", got)
	}
	if got := render(Undo{}); strings.Contains(got, "status-undo") {
		t.Fatal("an undo line without a measure")
	}
}
