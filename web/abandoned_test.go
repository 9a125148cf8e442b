package web_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/web/session"
)

// TestLeftPageIsNotAnError: a browser that goes on to another page
// cancels the request it left; what that request was reading ends with
// "context canceled", which is logged at DEBUG, never at ERROR.
func TestLeftPageIsNotAnError(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	f.logLevel.Set(slog.LevelDebug)
	for _, path := range []string{"/", "/permits", "/tasks", "/ledger", "/safety", "/setup", "/pending/live"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
		r.AddCookie(&http.Cookie{Name: session.CookieName, Value: b.cookie})
		f.panel.Handler().ServeHTTP(httptest.NewRecorder(), r)
	}
	logs := f.log.String()
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("a page the browser left was logged as an error: %s", line)
		}
	}
	if !strings.Contains(logs, "the browser left the page") {
		t.Errorf("the cancelled reads were not logged at all (is the check still exercised?):\n%s", logs)
	}
}
