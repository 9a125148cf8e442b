package status

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/selftestreport"
	"github.com/hearth-dev/hearth/web/ui"
)

func renderPage(t *testing.T, v View) string {
	t.Helper()
	var b strings.Builder
	if err := Page(ui.Chrome{Title: "Status", Active: "status"}, v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSelfTestSection: the Status page shows the last selftest's date and
// counts with a link to the report, says how to run one when none has
// run, says when the report cannot be read, and shows nothing without a
// data directory.
func TestSelfTestSection(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	html := renderPage(t, View{SelfTest: &SelfTestSummary{Found: true, FinishedAt: at, Counts: selftestreport.Counts{OK: 20, Fail: 2, Skipped: 5}}})
	for _, want := range []string{
		`data-testid="status-selftest"`, ui.When(at), `data-testid="selftest-fail">2 FAIL<`, `data-testid="selftest-ok">20 ok<`,
		`data-testid="selftest-skipped">5 skipped<`, `href="/status/selftest-report"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("missing %q", want)
		}
	}
	if html := renderPage(t, View{SelfTest: &SelfTestSummary{}}); !strings.Contains(html, `data-testid="selftest-none"`) || !strings.Contains(html, "hearth-tray selftest") || strings.Contains(html, "selftest-report-link") {
		t.Error("no report yet: the page must say how to run one and link nothing")
	}
	if html := renderPage(t, View{SelfTest: &SelfTestSummary{Err: "damaged"}}); !strings.Contains(html, `data-testid="selftest-error"`) {
		t.Error("an unreadable report must be said")
	}
	if html := renderPage(t, View{}); strings.Contains(html, "status-selftest") {
		t.Error("without a data directory there is no selftest section")
	}
}

// TestSelfTestReportRoute serves the saved report as JSON, and not found
// when there is none.
func TestSelfTestReportRoute(t *testing.T) {
	dir := t.TempDir()
	h := &Handler{Kit: &ui.Kit{Log: slog.New(slog.DiscardHandler)}, DataDir: dir}
	get := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.selfTestReport(w, httptest.NewRequest(http.MethodGet, "/status/selftest-report", nil))
		return w
	}
	if w := get(); w.Code != http.StatusNotFound {
		t.Fatalf("no report: %d", w.Code)
	}
	rep := &selftestreport.Report{RunID: "0a1b2c3d"}
	rep.Add(selftestreport.Result{Name: "uia.invoke", Status: selftestreport.OK, Detail: "clicked"})
	if err := selftestreport.Write(filepath.Join(dir, selftestreport.FileName), rep); err != nil {
		t.Fatal(err)
	}
	w := get()
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") || !strings.Contains(w.Body.String(), `"run_id": "0a1b2c3d"`) {
		t.Fatalf("report: %d %s %s", w.Code, w.Header(), w.Body)
	}
	if s := h.selfTest(); !s.Found || s.Counts.OK != 1 {
		t.Fatalf("summary %+v", s)
	}
}
