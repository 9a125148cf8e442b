package tasks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/jobs"
)

func TestRowsNewestFirstAndView(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	exit := 0
	js := []jobs.Listed{{Route: "r1", Summary: jobs.Summary{Kind: "job", ID: "job_old", State: "succeeded", Command: "make", ExitCode: &exit, CreatedAt: t0}}}
	fs := []dispatch.Future{{ID: "fut_new", Primitive: "fs.write", State: "running", Detached: true, CreatedAt: t0.Add(time.Minute)}}
	rows := Rows(js, fs)
	if len(rows) != 2 || rows[0].ID != "fut_new" || rows[1].ID != "job_old" || rows[1].Detail != "exit code 0" || rows[0].Detail != "detached" {
		t.Fatalf("rows: %+v", rows)
	}
	var b strings.Builder
	if err := List(Apply(rows, Filter{Page: 1}, t0)).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if strings.Index(html, `data-task-id="fut_new"`) > strings.Index(html, `data-task-id="job_old"`) {
		t.Error("not newest first")
	}
	for _, want := range []string{`data-testid="tasks"`, `data-kind="job"`, `data-testid="task-what"><code>make<`, `data-testid="task-state">running<`} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	b.Reset()
	if err := List(Apply(nil, Filter{Page: 1}, t0)).Render(context.Background(), &b); err != nil || !strings.Contains(b.String(), `data-testid="tasks-empty"`) {
		t.Errorf("empty list: %v %s", err, b.String())
	}
}

// TestRowSummaries: each row is one line a person reads; a delayed job
// says when it runs.
func TestRowSummaries(t *testing.T) {
	now := time.Date(2026, 3, 4, 14, 0, 0, 0, time.Local)
	later := now.Add(5 * time.Minute)
	done := now.Add(-time.Minute)
	for _, c := range []struct {
		r    Row
		want string
	}{
		{Row{Kind: "job", What: "echo", State: "queued", RunAt: &later}, "Job echo — runs at 14:05"},
		{Row{Kind: "job", What: "echo", State: "queued", RunAt: &done}, "Job echo — waiting to run"},
		{Row{Kind: "job", What: "make", State: "completed", FinishedAt: &done}, "Job make — done at 13:59"},
		{Row{Kind: "future", What: "machine.exec", State: "running"}, "ChatGPT's call to run a program — still running; the result will come"},
		{Row{Kind: "future", What: "machine.exec", State: "permit"}, "ChatGPT's call to run a program — waiting for your approval (Permits page)"},
		{Row{Kind: "job", What: "sleep", State: "cancelled", StoppedBy: "estop", FinishedAt: &done}, "Job sleep — stopped by the emergency stop at 13:59"},
		{Row{Kind: "future", What: "machine.exec", State: "cancelled", StoppedBy: "shutdown"}, "ChatGPT's call to run a program — stopped because Hearth was closing"},
		{Row{Kind: "job", What: "sleep", State: "cancelled", StoppedBy: "cancel"}, "Job sleep — cancelled"},
		{Row{Kind: "future", What: "fs.write", State: "failed", Outcome: "unknown"}, "ChatGPT's call to write a file — interrupted when Hearth stopped: check what happened, then tell Hearth on the Safety page"},
	} {
		if got := c.r.Summary(now); got != c.want {
			t.Errorf("Summary = %q, want %q", got, c.want)
		}
	}
}

// TestFilterAndPages: the filter keeps matching rows; pages hold PerPage.
func TestFilterAndPages(t *testing.T) {
	now := time.Now()
	var rows []Row
	for i := range 45 {
		state := "completed"
		if i%3 == 0 {
			state = "running"
		}
		rows = append(rows, Row{Kind: "job", ID: "job_" + string(rune('a'+i%26)) + string(rune('a'+i/26)), What: "echo", State: state, CreatedAt: now})
	}
	rows = append(rows, Row{Kind: "job", ID: "job_zz", What: "backup", State: "completed", CreatedAt: now})
	v := Apply(rows, Filter{Page: 1}, now)
	if v.Total != 46 || v.Pages != 3 || len(v.Rows) != PerPage {
		t.Fatalf("all: total %d pages %d rows %d", v.Total, v.Pages, len(v.Rows))
	}
	if v := Apply(rows, Filter{Page: 3}, now); len(v.Rows) != 6 {
		t.Fatalf("last page: %d rows", len(v.Rows))
	}
	if v := Apply(rows, Filter{Page: 9}, now); v.Filter.Page != 3 {
		t.Fatalf("a page past the end: %d", v.Filter.Page)
	}
	if v := Apply(rows, Filter{Q: "BACKUP", Page: 1}, now); v.Total != 1 || v.Rows[0].ID != "job_zz" {
		t.Fatalf("find backup: %+v", v.Rows)
	}
	if v := Apply(rows, Filter{Show: "active", Page: 1}, now); v.Total != 15 {
		t.Fatalf("active: %d", v.Total)
	}
	if a, b := Apply(rows, Filter{Page: 1}, now).Version, Apply(rows, Filter{Page: 2}, now).Version; a == b {
		t.Error("two pages have one version")
	}
}
