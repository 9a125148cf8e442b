package selftest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/selftestreport"
	"github.com/hearth-dev/hearth/internal/tray"
)

// fakeNotificationArea stands in for the Windows notification area, which
// does not exist here: it records the notices shown, or refuses them all
// as a shell without one does.
type fakeNotificationArea struct {
	shown  []tray.Notice
	refuse bool
}

func (f *fakeNotificationArea) show(n tray.Notice) error {
	f.shown = append(f.shown, n)
	if f.refuse {
		return skip("fake: no notification area")
	}
	return nil
}

// runNotificationCheck runs hearth.start, tray.notification and a last
// check that reads the temporary Hearth's permits and ledger before the
// run removes it.
func runNotificationCheck(t *testing.T, area *fakeNotificationArea) (map[string]selftestreport.Result, string) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	var stdout bytes.Buffer
	rep, _ := Run(context.Background(), Options{Stdout: &stdout, Version: "test", notify: area.show, checks: func(r *run) []check {
		var out []check
		for _, c := range r.checks() {
			if c.name == "hearth.start" || c.name == "tray.notification" {
				out = append(out, c)
			}
		}
		return append(out, check{name: "permits.after", needs: []string{"hearth.start"}, run: func(ctx context.Context) (string, error) {
			pending, err := r.hearth.app.Operator.Permits(ctx, "pending")
			if err != nil || len(pending) != 0 {
				return "", fmt.Errorf("pending permits after the check: %v %v", pending, err)
			}
			tail, err := r.hearth.app.Ledger.Tail(ctx, 100)
			if err != nil {
				return "", err
			}
			for _, e := range tail {
				var d map[string]any
				if e.Kind == "permit_denied" && json.Unmarshal(e.Data, &d) == nil && d["operator"] == Operator {
					return "denied by the selftest", nil
				}
			}
			return "", fmt.Errorf("no permit_denied entry by %q in the ledger", Operator)
		}})
	}})
	got := map[string]selftestreport.Result{}
	for _, c := range rep.Checks {
		got[c.Name] = c
	}
	return got, stdout.String()
}

// TestTrayNotificationShowsThePermitNotice: the notification check shows
// what the tray shows for a permit of the temporary Hearth (the tray's own
// notification logic, opening the Permits page, naming the request), and
// the selftest denies that permit afterwards, journaled as the selftest.
func TestTrayNotificationShowsThePermitNotice(t *testing.T) {
	area := &fakeNotificationArea{}
	got, out := runNotificationCheck(t, area)
	t.Logf("selftest output:\n%s", out)
	for _, name := range []string{"hearth.start", "tray.notification", "permits.after"} {
		if got[name].Status != selftestreport.OK {
			t.Errorf("%s: %s %s\n%s", name, got[name].Status, got[name].Detail, out)
		}
	}
	if len(area.shown) != 1 {
		t.Fatalf("%d notices shown, want the one permit notice: %+v", len(area.shown), area.shown)
	}
	n := area.shown[0]
	if n.Kind != tray.NoticePermit || n.Page != "/permits" || !strings.HasPrefix(n.Title, "ChatGPT is waiting for your permission") ||
		!strings.HasPrefix(n.Text, "ChatGPT wants to run ") || !strings.Contains(n.Text, "selftest-permit-notice") {
		t.Fatalf("shown %+v, want the tray's permit notice for the selftest's request", n)
	}
}

// TestTrayNotificationWithoutANotificationArea: a shell that has no
// notification area makes the check skipped, saying so, and the permit is
// denied all the same.
func TestTrayNotificationWithoutANotificationArea(t *testing.T) {
	got, out := runNotificationCheck(t, &fakeNotificationArea{refuse: true})
	if c := got["tray.notification"]; c.Status != selftestreport.Skipped || !strings.Contains(c.Detail, "no notification area") {
		t.Errorf("tray.notification: %s %s\n%s", c.Status, c.Detail, out)
	}
	if c := got["permits.after"]; c.Status != selftestreport.OK {
		t.Errorf("permits.after: %s %s\n%s", c.Status, c.Detail, out)
	}
}
