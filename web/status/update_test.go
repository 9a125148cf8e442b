package status

import (
	"context"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/update"
)

func renderUpdate(t *testing.T, v UpdateView) string {
	t.Helper()
	var b strings.Builder
	if err := UpdateLine(v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return html.UnescapeString(b.String())
}

// TestUpdateCardSays: the update card says each case in its own words: a
// release that rolled back (and will not be installed again), one whose
// hand-overs were cut short twice, update information dated in the
// future, a release
// without a package for this computer, update information too old to
// call Hearth up to date, the work an update now would stop with the
// choice to wait for it, an update waiting for that, and a problem
// sentence ending with one period.
func TestUpdateCardSays(t *testing.T) {
	checked := time.Now()
	offer := &update.Offer{Version: "1.2.0", Changes: "Faster."}
	for _, c := range []struct {
		name string
		v    UpdateView
		want []string
		not  []string
	}{
		{"refused", UpdateView{State: update.State{Version: "1.1.0", Checked: checked,
			Refused: &update.Refused{Version: "1.2.0", Started: true, Plain: "the new version did not start properly", Detail: "exit status 3"}}},
			[]string{"Hearth 1.2.0 did not start on this PC and was rolled back; it will not be installed again.", "exit status 3"},
			[]string{"up to date", "update-button"}},
		{"refused after two cut-short hand-overs", UpdateView{State: update.State{Version: "1.1.0", Checked: checked,
			Refused: &update.Refused{Version: "1.2.0", Started: true, Unfinished: 2, Plain: "Hearth was stopped 2 times while it checked the new version 1.2.0"}}},
			[]string{"Hearth was stopped twice while it checked Hearth 1.2.0 on this PC (the computer shut down, or Hearth was ended), so it went back each time; that version will not be installed again."},
			[]string{"did not start on this PC", "up to date", "update-button"}},
		{"future manifest", UpdateView{State: update.State{Version: "1.1.0", Checked: checked,
			Problem: &update.Problem{Plain: "The update information is dated in the future (the release was signed with a wrong date, or this computer's clock is wrong), so Hearth ignored it; check the date and time on this computer"}}},
			[]string{"so Hearth ignored it; check the date and time on this computer.<"},
			[]string{"up to date"}},
		{"no package", UpdateView{State: update.State{Version: "1.1.0", Checked: checked, NoPackage: "1.2.0"}},
			[]string{"Hearth 1.2.0 is out, but it has no package for this computer (" + update.Platform() + ")"},
			[]string{"up to date"}},
		{"stale", UpdateView{State: update.State{Version: "1.1.0", Checked: checked, Stale: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}},
			[]string{"Hearth could not get current update information since 1 March 2026"},
			[]string{"up to date"}},
		{"busy", UpdateView{Busy: "2 tasks are running and 1 approval is waiting", State: update.State{Version: "1.1.0", Checked: checked, Offer: offer, CanInstall: true}},
			[]string{"2 tasks are running and 1 approval is waiting. Update now stops them", ">Update when they are done</button>", `name="when" value="done"`, `name="when" value="now"`, ">Update now</button>"},
			nil},
		{"quiet", UpdateView{State: update.State{Version: "1.1.0", Checked: checked, Offer: offer, CanInstall: true}},
			[]string{">Update</button>"},
			[]string{"when they are done"}},
		{"waiting", UpdateView{Busy: "1 task is running", State: update.State{Version: "1.1.0", Checked: checked, Offer: offer, CanInstall: true, Waiting: true}},
			[]string{"Hearth will update to 1.2.0 when the work in progress is done (1 task is running). Nothing is stopped meanwhile.", "Update now (stops the work in progress)"},
			[]string{">Update when they are done<"}},
		{"problem with its own period", UpdateView{State: update.State{Version: "1.1.0", Checked: checked,
			Problem: &update.Problem{Plain: "Version 1.1.0 cannot update straight to 1.4.0: install Hearth 1.2.0 or later first (download it from the Hearth website).", Detail: "min_version 1.2.0"}}},
			[]string{"(download it from the Hearth website).<"},
			[]string{"website).."}},
		{"current", UpdateView{State: update.State{Version: "1.1.0", Checked: checked}},
			[]string{"Hearth is up to date (version 1.1.0"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := renderUpdate(t, c.v)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, n := range c.not {
				if strings.Contains(got, n) {
					t.Errorf("has %q in:\n%s", n, got)
				}
			}
		})
	}
}
