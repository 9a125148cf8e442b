package status

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestLastBackupLine(t *testing.T) {
	render := func(v View) string {
		var b strings.Builder
		if err := Facts(v).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	made := time.Date(2026, 4, 5, 6, 7, 8, 0, time.Local)
	html := render(View{Backup: Backup{Known: true, Made: made, Reason: "daily"}})
	if want := `data-testid="status-last-backup">2026-04-05 06:07:08 (the daily backup)`; !strings.Contains(html, want) {
		t.Errorf("missing %q in\n%s", want, html)
	}
	html = render(View{Backup: Backup{Known: true, Made: made, Reason: "migration"}})
	if !strings.Contains(html, "(made before an update)") {
		t.Errorf("migration backup line:\n%s", html)
	}
	html = render(View{})
	if !strings.Contains(html, `data-testid="status-last-backup">None yet: Hearth makes one every day.`) {
		t.Errorf("no-backup line:\n%s", html)
	}
}
