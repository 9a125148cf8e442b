package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
)

// TestEveryRouteGuarded walks the panel's router, so that a route added
// later cannot skip a guard: every route but the login and the static
// files answers 401 without a session and 403 for a foreign Host, and
// every POST answers 403 without the CSRF token and 401 with the token
// but no session. None of those requests changes anything.
func TestEveryRouteGuarded(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	routes, ok := f.panel.Handler().(chi.Routes)
	if !ok {
		t.Fatalf("the panel's handler is a %T, not a chi router", f.panel.Handler())
	}
	type route struct{ method, path string }
	var all []route
	err := chi.Walk(routes, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if pattern == "/login" || strings.HasPrefix(pattern, "/static/") {
			return nil
		}
		path := strings.NewReplacer("{id}", "pmt_x", "{file}", "x").Replace(pattern)
		all = append(all, route{method, path})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk must see the routes of the guided setup and the live
	// parts, or it checks nothing.
	seen := map[string]bool{}
	for _, r := range all {
		seen[r.method+" "+r.path] = true
	}
	for _, want := range []string{"POST /setup/connect", "POST /setup/tunnel-id", "POST /setup/open-folder", "POST /safety/resume",
		"GET /permits/live", "GET /nav/pending/live", "GET /lowered/live", "GET /setup/progress/live", "GET /status/live", "POST /permits/pmt_x/approve"} {
		if !seen[want] {
			t.Errorf("the walk did not find %s", want)
		}
	}
	for _, r := range all {
		if got := f.do(t, req{method: r.method, path: r.path}).StatusCode; got != http.StatusUnauthorized {
			t.Errorf("%s %s without a session: %d, want 401", r.method, r.path, got)
		}
		if got := f.do(t, req{method: r.method, path: r.path, b: b, host: "evil.example"}).StatusCode; got != http.StatusForbidden {
			t.Errorf("%s %s with a foreign Host: %d, want 403", r.method, r.path, got)
		}
		if r.method != http.MethodPost {
			continue
		}
		if got := f.do(t, req{method: r.method, path: r.path, b: b, csrf: "-"}).StatusCode; got != http.StatusForbidden {
			t.Errorf("%s %s without the CSRF token: %d, want 403", r.method, r.path, got)
		}
		if got := f.do(t, req{method: r.method, path: r.path, csrf: b.csrf}).StatusCode; got != http.StatusUnauthorized {
			t.Errorf("%s %s with the token but no session: %d, want 401", r.method, r.path, got)
		}
	}
	if f.latched(t) {
		t.Error("a refused request latched the e-stop")
	}
	if ok, _ := f.in.App.Tunnel.KeyPresent(); ok {
		t.Error("a refused request stored a tunnel key")
	}
	if f.in.App.Tunnel.Running() {
		t.Error("a refused request started the tunnel")
	}
}
