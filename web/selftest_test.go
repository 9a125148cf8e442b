package web_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/selftestreport"
)

// TestStatusLinksTheLastSelftest: the Status page of a real Hearth shows
// the last selftest report in its data directory (date and counts) and
// serves it, to a signed-in session only.
func TestStatusLinksTheLastSelftest(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	if page := f.get(t, b, "/"); !strings.Contains(page, `data-testid="selftest-none"`) {
		t.Fatal("before any selftest the Status page must say how to run one")
	}
	rep := &selftestreport.Report{RunID: "0a1b2c3d", FinishedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	rep.Add(selftestreport.Result{Name: "uia.invoke", Status: selftestreport.OK, Detail: "clicked"})
	rep.Add(selftestreport.Result{Name: "tray.icon", Status: selftestreport.Skipped, Detail: "no notification area"})
	if err := selftestreport.Write(filepath.Join(f.in.Home, selftestreport.FileName), rep); err != nil {
		t.Fatal(err)
	}
	page := f.get(t, b, "/")
	for _, want := range []string{`data-testid="selftest-ok">1 ok<`, `data-testid="selftest-skipped">1 skipped<`, `data-testid="selftest-fail">0 FAIL<`, `href="/status/selftest-report"`} {
		if !strings.Contains(page, want) {
			t.Errorf("Status page lacks %q", want)
		}
	}
	if body := f.get(t, b, "/status/selftest-report"); !strings.Contains(body, `"run_id": "0a1b2c3d"`) {
		t.Fatalf("report route: %s", body)
	}
	if r := f.do(t, req{method: "GET", path: "/status/selftest-report"}); r.StatusCode == http.StatusOK || strings.Contains(r.body, "0a1b2c3d") {
		t.Fatalf("the report must need a session: %d %s", r.StatusCode, r.body)
	}
}
