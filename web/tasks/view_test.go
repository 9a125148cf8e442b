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
	if err := List(rows).Render(context.Background(), &b); err != nil {
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
	if err := List(nil).Render(context.Background(), &b); err != nil || !strings.Contains(b.String(), `data-testid="tasks-empty"`) {
		t.Errorf("empty list: %v %s", err, b.String())
	}
}
