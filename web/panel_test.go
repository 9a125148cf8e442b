package web_test

import (
	"context"
	"database/sql"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/govern/governtest"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/web/session"
)

// TestHostileRequests sends the requests an attacker could make (another
// site in the operator's browser, a DNS-rebinding page, a process on the
// machine without the login URL) to the real router over a real Hearth,
// and checks each is refused without latching the e-stop; then the
// well-formed request does latch it, so the refusals are meaningful.
func TestHostileRequests(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	other := f.login(t)
	estop := url.Values{"operator": {"mallory"}, "reason": {"forged"}}
	setKey := url.Values{"key": {"sk-forged-0123456789abcdef"}}
	cases := []struct {
		name string
		r    req
		want int
	}{
		{"foreign Host", req{method: "GET", path: "/", b: b, host: "evil.example"}, 403},
		{"foreign Host with port", req{method: "GET", path: "/", b: b, host: "evil.example:3001"}, 403},
		{"rebinding name with loopback prefix", req{method: "GET", path: "/", b: b, host: "127.0.0.1.evil.example"}, 403},
		{"other loopback address", req{method: "GET", path: "/", b: b, host: "127.0.0.2"}, 403},
		{"foreign Host before login", req{method: "GET", path: "/login?token=x", host: "evil.example"}, 403},
		{"foreign Host on POST", req{method: "POST", path: "/safety/estop", b: b, host: "evil.example", form: estop}, 403},
		{"no session", req{method: "GET", path: "/"}, 401},
		{"no session on a fragment", req{method: "GET", path: "/tasks/live"}, 401},
		{"no session on an unknown path", req{method: "GET", path: "/admin"}, 401},
		{"bogus session", req{method: "GET", path: "/", b: &browser{cookie: "forged", csrf: b.csrf}}, 401},
		{"no session on POST", req{method: "POST", path: "/safety/estop", form: estop, csrf: b.csrf}, 401},
		{"foreign Origin on POST", req{method: "POST", path: "/safety/estop", b: b, form: estop, origin: "http://evil.example"}, 403},
		{"cross-site fetch on POST", req{method: "POST", path: "/safety/estop", b: b, form: estop, fetchSite: "cross-site"}, 403},
		{"same-site but other origin on POST", req{method: "POST", path: "/safety/estop", b: b, form: estop, fetchSite: "same-site"}, 403},
		{"missing CSRF token", req{method: "POST", path: "/safety/estop", b: b, form: estop, csrf: "-"}, 403},
		{"wrong CSRF token", req{method: "POST", path: "/safety/estop", b: b, form: estop, csrf: "AAAA" + b.csrf[4:]}, 403},
		{"another session's CSRF token", req{method: "POST", path: "/safety/estop", b: b, form: estop, csrf: other.csrf}, 403},
		{"wrong CSRF header", req{method: "POST", path: "/safety/estop", b: b, form: estop, csrf: "nope", csrfHeader: true}, 403},
		{"GET on a POST route", req{method: "GET", path: "/safety/estop?operator=mallory&reason=forged", b: b}, 405},
		{"GET on export", req{method: "GET", path: "/ledger/export", b: b}, 405},
		{"PUT", req{method: "PUT", path: "/safety/estop", b: b}, 405},
		{"foreign Host on the setup key", req{method: "POST", path: "/setup/key", b: b, host: "evil.example", form: setKey}, 403},
		{"no session on the setup key", req{method: "POST", path: "/setup/key", form: setKey, csrf: b.csrf}, 401},
		{"foreign Origin on the setup key", req{method: "POST", path: "/setup/key", b: b, form: setKey, origin: "http://evil.example"}, 403},
		{"missing CSRF token on the setup key", req{method: "POST", path: "/setup/key", b: b, form: setKey, csrf: "-"}, 403},
		{"GET on the setup key", req{method: "GET", path: "/setup/key?" + setKey.Encode(), b: b}, 405},
		{"missing CSRF token on tunnel start", req{method: "POST", path: "/setup/start", b: b, csrf: "-"}, 403},
		{"no session on the setup fragment", req{method: "GET", path: "/setup/live"}, 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(t, tc.r)
			if r.StatusCode != tc.want {
				t.Fatalf("status %d, want %d\n%s", r.StatusCode, tc.want, r.body)
			}
			if f.latched(t) {
				t.Fatal("a refused request latched the e-stop")
			}
			if ok, _ := f.in.App.Tunnel.KeyPresent(); ok {
				t.Fatal("a refused request stored a tunnel runtime key")
			}
			if tc.want == 401 && !strings.Contains(r.body, "tray") || tc.want == 401 && !strings.Contains(r.body, "Control panel at") {
				t.Errorf("401 page does not say how to get in: %s", r.body)
			}
		})
	}
	for _, tc := range []struct {
		name string
		r    req
	}{
		{"same-origin fetch", req{fetchSite: "same-origin", origin: f.srv.URL}},
		{"no browser headers (a form without Origin)", req{}},
		{"token in the htmx header", req{csrfHeader: true}},
	} {
		t.Run("allowed: "+tc.name, func(t *testing.T) {
			tc.r.method, tc.r.path, tc.r.b, tc.r.form = "POST", "/safety/estop", b, url.Values{"operator": {"ada"}, "reason": {"test"}}
			r := f.do(t, tc.r)
			if r.StatusCode != http.StatusSeeOther || !f.latched(t) {
				t.Fatalf("well-formed POST: %d latched=%v\n%s", r.StatusCode, f.latched(t), r.body)
			}
			if err := f.in.App.Operator.Reset(context.Background(), "test"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestServePrintsOneTimeLoginURL runs the real serve: its second line is
// a login URL that works once.
func TestServePrintsOneTimeLoginURL(t *testing.T) {
	p := hearthtest.StartProcess(t, t.TempDir())
	u, err := url.Parse(p.PanelURL)
	if err != nil || u.Path != "/login" || len(u.Query().Get("token")) != 43 || u.Hostname() != "127.0.0.1" {
		t.Fatalf("printed panel URL %q", p.PanelURL)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, want := range []int{http.StatusSeeOther, http.StatusUnauthorized} {
		res, err := client.Get(p.PanelURL)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("use %d of the printed URL: %d, want %d", i+1, res.StatusCode, want)
		}
	}
}

func TestLoopbackHostsAccepted(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	for _, host := range []string{"127.0.0.1", "127.0.0.1:3001", "localhost", "LOCALHOST:80", "[::1]", "[::1]:3001"} {
		if r := f.do(t, req{method: "GET", path: "/", b: b, host: host}); r.StatusCode != http.StatusOK {
			t.Errorf("Host %s: %d", host, r.StatusCode)
		}
	}
}

func TestLoginToken(t *testing.T) {
	f := newFixture(t, nil)
	mint := func() string {
		u, err := f.panel.NewLoginURL(f.srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(u, f.srv.URL+"/login?token=") {
			t.Fatalf("login URL %s", u)
		}
		return strings.TrimPrefix(u, f.srv.URL)
	}
	t.Run("sets a strict session cookie once", func(t *testing.T) {
		path := mint()
		r := f.do(t, req{method: "GET", path: path})
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/setup" {
			t.Fatalf("first use, setup not done: %d %s", r.StatusCode, r.Header.Get("Location"))
		}
		var c *http.Cookie
		for _, x := range r.Cookies() {
			if x.Name == session.CookieName {
				c = x
			}
		}
		if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || len(c.Value) < 40 {
			t.Fatalf("session cookie %+v", c)
		}
		if r := f.do(t, req{method: "GET", path: path}); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("reused token: %d", r.StatusCode)
		}
	})
	t.Run("expires after 10 minutes", func(t *testing.T) {
		path := mint()
		f.clock.Advance(10*time.Minute + time.Second)
		if r := f.do(t, req{method: "GET", path: path}); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("expired token: %d", r.StatusCode)
		}
	})
	t.Run("works within 10 minutes", func(t *testing.T) {
		path := mint()
		f.clock.Advance(9 * time.Minute)
		if r := f.do(t, req{method: "GET", path: path}); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("fresh token: %d", r.StatusCode)
		}
	})
	t.Run("wrong tokens", func(t *testing.T) {
		good := mint()
		tok := strings.TrimPrefix(good, "/login?token=")
		for _, path := range []string{"/login", "/login?token=", "/login?token=" + tok[:len(tok)-1], "/login?token=" + tok + "x"} {
			if r := f.do(t, req{method: "GET", path: path}); r.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s: %d", path, r.StatusCode)
			}
		}
		if r := f.do(t, req{method: "GET", path: good}); r.StatusCode != http.StatusSeeOther {
			t.Errorf("the real token after wrong guesses: %d", r.StatusCode)
		}
	})
	t.Run("sessions end after 12 hours idle", func(t *testing.T) {
		b := f.login(t)
		f.clock.Advance(11 * time.Hour)
		f.get(t, b, "/")
		f.clock.Advance(11 * time.Hour)
		f.get(t, b, "/")
		// An open tab's polling is not the operator's activity.
		for range 2 {
			f.clock.Advance(5 * time.Hour)
			f.get(t, b, "/tasks/live")
		}
		f.clock.Advance(2*time.Hour + time.Second)
		if r := f.do(t, req{method: "GET", path: "/", b: b}); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("idle session: %d", r.StatusCode)
		}
	})
	t.Run("logout ends the session", func(t *testing.T) {
		b := f.login(t)
		if r := f.post(t, b, "/logout"); r.StatusCode != http.StatusOK {
			t.Fatalf("logout: %d", r.StatusCode)
		}
		if r := f.do(t, req{method: "GET", path: "/", b: b}); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("after logout: %d", r.StatusCode)
		}
	})
}

var (
	scriptTag  = regexp.MustCompile(`<script[^>]*>`)
	inlineAttr = regexp.MustCompile(`\s(on[a-z]+|style|hx-on[^=]*)=`)
	inputTag   = regexp.MustCompile(`<(input|select|textarea)\b[^>]*>`)
	idAttr     = regexp.MustCompile(`\bid="([^"]+)"`)
)

// TestPagesHeadersAndMarkup checks every page: the security headers, no
// inline script or style (the CSP would block them), one h1, a label for
// every field, a data-testid on the title; and that reading pages changes
// nothing in the ledger.
func TestPagesHeadersAndMarkup(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	c := hearthtest.Connect(t, f.in.URL, "conv-pages")
	execNeedingPermit(t, c, "pages") // a permit, so the Permits page has forms
	if err := f.in.App.DB.InTx(context.Background(), func(tx *sql.Tx) error {
		return governtest.OpenUnknownTx(context.Background(), tx, "cmd_pages", "route-pages", "machine.exec", time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.in.App.Operator.AddRule(context.Background(), "ada", "git", ""); err != nil {
		t.Fatal(err)
	}
	before, err := f.in.App.Ledger.Size(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantHeaders := map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
	}
	pages := []string{"/", "/setup", "/permits", "/safety", "/tasks", "/ledger", "/recipes"}
	for _, p := range append(pages, "/status/live", "/tasks/live", "/setup/live", "/nope") {
		r := f.do(t, req{method: "GET", path: p, b: b})
		for k, v := range wantHeaders {
			if got := r.Header.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", p, k, got, v)
			}
		}
		for _, tag := range scriptTag.FindAllString(r.body, -1) {
			if !strings.Contains(tag, ` src="/static/`) {
				t.Errorf("%s: inline or foreign script %s", p, tag)
			}
		}
		if strings.Contains(r.body, "<style") {
			t.Errorf("%s: inline <style>", p)
		}
		if m := inlineAttr.FindString(r.body); m != "" {
			t.Errorf("%s: inline handler or style attribute %q", p, m)
		}
	}
	for _, p := range pages {
		body := f.get(t, b, p)
		if n := strings.Count(body, "<h1"); n != 1 {
			t.Errorf("%s: %d h1 elements", p, n)
		}
		if !strings.Contains(body, `data-testid="page-title"`) || !strings.Contains(body, `data-testid="nav"`) {
			t.Errorf("%s: no page-title or nav test id", p)
		}
		for _, field := range inputTag.FindAllString(body, -1) {
			if strings.Contains(field, `type="hidden"`) {
				continue
			}
			id := idAttr.FindStringSubmatch(field)
			if id == nil || !strings.Contains(body, `<label for="`+id[1]+`"`) {
				t.Errorf("%s: field without a label: %s", p, field)
			}
		}
	}
	if after, _ := f.in.App.Ledger.Size(context.Background()); after != before {
		t.Errorf("reading pages changed the ledger: %d → %d entries", before, after)
	}
	if st, _ := f.in.App.Gov.Status(context.Background()); st.EStop.Latched || st.QueueHeld {
		t.Errorf("reading pages changed governance: %+v", st)
	}
	if r := f.do(t, req{method: "GET", path: "/static/htmx.min.js"}); r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("htmx: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if r := f.do(t, req{method: "GET", path: "/static/panel.css"}); r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/css") {
		t.Errorf("css: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
}

// TestInternalErrorsStayInTheLog closes Hearth's database under the panel:
// the browser gets the generic page, the log gets the error.
func TestInternalErrorsStayInTheLog(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	f.in.Stop()
	for _, p := range []string{"/", "/permits", "/tasks/live", "/ledger"} {
		r := f.do(t, req{method: "GET", path: p, b: b})
		if r.StatusCode != http.StatusInternalServerError || !strings.Contains(r.body, `data-testid="error-internal"`) {
			t.Fatalf("%s: %d\n%s", p, r.StatusCode, r.body)
		}
		for _, leak := range []string{"sql", "database", "closed"} {
			if strings.Contains(strings.ToLower(r.body), leak) {
				t.Errorf("%s: the page leaks %q: %s", p, leak, r.body)
			}
		}
	}
	if !strings.Contains(f.log.String(), "database is closed") {
		t.Errorf("the error is not in the log: %s", f.log.String())
	}
}

func TestSafetyActions(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)

	// The operator name is required, then remembered.
	f.post(t, b, "/safety/estop", "operator", "  ", "reason", "x")
	if f.latched(t) || !strings.Contains(f.get(t, b, "/safety"), "Enter your name") {
		t.Fatal("an e-stop without an operator name was accepted or not explained")
	}
	if r := f.post(t, b, "/safety/estop", "operator", "Ada", "reason", "smoke"); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/safety" {
		t.Fatalf("estop: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	page := f.get(t, b, "/safety")
	if !f.latched(t) || !strings.Contains(page, `data-testid="estop-banner"`) || !strings.Contains(page, `value="Ada"`) {
		t.Fatalf("after e-stop: latched=%v\n%s", f.latched(t), page)
	}

	// Reset needs the typed word.
	for _, word := range []string{"", "yes", "RESET please"} {
		f.post(t, b, "/safety/reset", "operator", "Ada", "confirm", word)
		if !f.latched(t) {
			t.Fatalf("reset with confirmation %q released the latch", word)
		}
	}
	if !strings.Contains(f.get(t, b, "/safety"), "type the word reset") {
		t.Error("a refused reset is not explained")
	}
	// The word in any case, with spaces around it, is the word.
	f.post(t, b, "/safety/reset", "operator", "Ada", "confirm", " Reset ")
	if f.latched(t) {
		t.Fatal("typed Reset (capital R, spaces around) did not release the latch")
	}

	// The queue stays held until resumed.
	if st, _ := f.in.App.Gov.Status(context.Background()); !st.QueueHeld {
		t.Fatal("the e-stop did not hold the queue")
	}
	if !strings.Contains(f.get(t, b, "/safety"), `data-testid="queue-held-note"`) {
		t.Error("a queue still held after a reset alone is not said next to its button")
	}
	f.post(t, b, "/safety/resume", "operator", "Ada")
	if st, _ := f.in.App.Gov.Status(context.Background()); st.QueueHeld {
		t.Fatal("resume did not release the queue")
	}

	// "Reset and let queued jobs run" is one action; it still needs the word.
	f.post(t, b, "/safety/estop", "operator", "Ada", "reason", "again")
	f.post(t, b, "/safety/reset", "operator", "Ada", "confirm", "no", "then", "resume")
	if st, _ := f.in.App.Gov.Status(context.Background()); !st.EStop.Latched || !st.QueueHeld {
		t.Fatalf("reset and resume without the word: %+v", st)
	}
	f.post(t, b, "/safety/reset", "operator", "Ada", "confirm", "reset", "then", "resume")
	if st, _ := f.in.App.Gov.Status(context.Background()); st.EStop.Latched || st.QueueHeld {
		t.Fatalf("reset and resume left %+v", st)
	}

	// Policy.
	f.post(t, b, "/safety/policy", "operator", "Ada", "mode", "yolo")
	if m := f.in.App.Gov.Mode(context.Background()); m != "ask" {
		t.Fatalf("an invalid mode was set: %s", m)
	}
	f.post(t, b, "/safety/policy", "operator", "Ada", "mode", "read-only")
	if m := f.in.App.Gov.Mode(context.Background()); m != "read-only" {
		t.Fatalf("mode %s", m)
	}

	// Reconcile an open UNKNOWN.
	ctx := context.Background()
	if err := f.in.App.DB.InTx(ctx, func(tx *sql.Tx) error {
		return governtest.OpenUnknownTx(ctx, tx, "cmd_unknown1", "route-x", "machine.exec", time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.get(t, b, "/safety"), `data-command-id="cmd_unknown1"`) {
		t.Fatal("the open UNKNOWN is not listed")
	}
	f.post(t, b, "/safety/reconcile", "operator", "Ada", "command_id", "cmd_unknown1", "observed", "")
	if u, _ := f.in.App.Gov.Unknowns(ctx, ""); len(u) != 1 {
		t.Fatal("reconciled without an observation")
	}
	f.post(t, b, "/safety/reconcile", "operator", "Ada", "command_id", "cmd_unknown1", "observed", "the file is intact")
	if u, _ := f.in.App.Gov.Unknowns(ctx, ""); len(u) != 0 {
		t.Fatalf("still open: %+v", u)
	}

	// Every decision is in the ledger under the operator's name.
	tail, err := f.in.App.Ledger.Tail(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, e := range tail {
		kinds[e.Kind] = true
	}
	for _, k := range []string{"estop", "reset", "queue_resume", "policy_change", "reconcile"} {
		if !kinds[k] {
			t.Errorf("no %s entry in the ledger", k)
		}
	}
}

func TestPermitDecisions(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	c := hearthtest.Connect(t, f.in.URL, "conv-permits")

	// Approve once: the exact input and its digest are shown; the result arrives.
	pid, fid := execNeedingPermit(t, c, "approved once")
	page := f.get(t, b, "/permits")
	perms, err := f.in.App.Operator.Permits(context.Background(), "pending")
	if err != nil || len(perms) != 1 {
		t.Fatalf("pending: %v %v", perms, err)
	}
	for _, want := range []string{`data-permit-id="` + pid + `"`, perms[0].Digest, "approved once", `value="echo"`, `data-testid="nav-pending-count"`} {
		if !strings.Contains(page, want) {
			t.Errorf("permits page lacks %q", want)
		}
	}
	if r := f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ada", "scope", "once"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", r.StatusCode)
	}
	if env := await(t, c, fid); env["state"] != "completed" || hearthtest.Get(env, "result.stdout.text") != "approved once\n" {
		t.Fatalf("approved result: %v", env)
	}
	if rules, _ := f.in.App.Gov.Rules(context.Background()); len(rules) != 0 {
		t.Fatalf("approve once added a rule: %v", rules)
	}
	// A second decision on the same permit is refused with a message.
	f.post(t, b, "/permits/"+pid+"/deny", "operator", "Ada")
	if !strings.Contains(f.get(t, b, "/permits"), "no longer waiting") {
		t.Error("deciding a decided permit is not explained")
	}

	// Deny: the call arrives blocked.
	pid, fid = execNeedingPermit(t, c, "denied")
	f.post(t, b, "/permits/"+pid+"/deny", "operator", "Ada")
	if env := await(t, c, fid); env["state"] != "blocked" {
		t.Fatalf("denied result: %v", env)
	}

	// Approve and always allow: a rule appears; the next echo needs no permit.
	pid, fid = execNeedingPermit(t, c, "always")
	f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ada", "scope", "always", "program", "echo", "cwd_root", "relative/dir")
	if rules, _ := f.in.App.Gov.Rules(context.Background()); len(rules) != 0 {
		t.Fatal("a rule with a relative cwd root was added")
	}
	f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ada", "scope", "always", "program", "echo")
	if env := await(t, c, fid); env["state"] != "completed" {
		t.Fatalf("approved result: %v", env)
	}
	// The rule covers what the card showed: echo with exactly the
	// arguments it showed ("always"), not echo with any others.
	rules, err := f.in.App.Gov.Rules(context.Background())
	if err != nil || len(rules) != 1 || rules[0].Program != "echo" || !slices.Equal(rules[0].Args, []string{"always"}) || rules[0].CreatedBy != "Ada" {
		t.Fatalf("rules: %+v %v", rules, err)
	}
	if r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"always"}}); r.State() != "completed" {
		t.Fatalf("exec under the rule: %s", r.Raw)
	}
	if r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"always", "ruled"}}); r.State() != "pending" {
		t.Fatalf("exec with an argument after the card's ran under the rule for echo, a program outside the argument table: %s", r.Raw)
	}
	if r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"ruled"}}); r.State() != "pending" {
		t.Fatalf("exec with arguments the card did not show ran under the rule: %s", r.Raw)
	}
	if !strings.Contains(f.get(t, b, "/permits"), `data-rule-id="`+rules[0].ID+`"`) {
		t.Fatal("the rule is not listed")
	}
	f.post(t, b, "/permits/rules/"+rules[0].ID+"/remove", "operator", "Ada")
	if rules, _ := f.in.App.Gov.Rules(context.Background()); len(rules) != 0 {
		t.Fatalf("rule not removed: %v", rules)
	}
}

func TestLedgerVerifyAndExport(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	f.post(t, b, "/safety/estop", "operator", "Ada", "reason", "evidence")
	page := f.get(t, b, "/ledger")
	if !strings.Contains(page, `data-testid="ledger-entry"`) || !strings.Contains(page, "evidence") {
		t.Fatalf("ledger page lacks the e-stop entry:\n%s", page)
	}
	r := f.post(t, b, "/ledger/verify")
	if r.StatusCode != http.StatusOK || !strings.Contains(r.body, `data-testid="verify-ok"`) || !strings.Contains(r.body, f.in.App.Ledger.PublicKey()) {
		t.Fatalf("verify: %d\n%s", r.StatusCode, r.body)
	}
	r = f.post(t, b, "/ledger/export")
	if r.StatusCode != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Disposition"), `attachment; filename="hearth-evidence-`) {
		t.Fatalf("export: %d %v", r.StatusCode, r.Header)
	}
	rep, err := ledger.VerifyBundle(strings.NewReader(r.body), ledger.ExpectKey(f.in.App.Ledger.PublicKey()))
	if err != nil || rep.Entries < 1 {
		t.Fatalf("exported bundle: %+v %v", rep, err)
	}
}

func TestTasksListsEveryConversation(t *testing.T) {
	f := newFixture(t, hearthtest.Trusted)
	b := f.login(t)
	ids := map[string]bool{}
	for _, conv := range []string{"conv-a", "conv-b"} {
		c := hearthtest.Connect(t, f.in.URL, conv)
		r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{conv}, "detach": true})
		id, _ := r.Env["future_id"].(string)
		if id == "" {
			t.Fatalf("detached call: %s", r.Raw)
		}
		ids[id] = true
		r = c.Call("task", map[string]any{"operation": "submit", "job": map[string]any{"command": "echo", "args": []string{conv}}})
		job, _ := hearthtest.Get(r.Env, "result.id").(string)
		if job == "" {
			job, _ = hearthtest.Get(r.Env, "result.jobs.0.id").(string)
		}
		if job == "" {
			t.Fatalf("submit: %s", r.Raw)
		}
		ids[job] = true
	}
	for _, p := range []string{"/tasks", "/tasks/live"} {
		body := f.get(t, b, p)
		for id := range ids {
			if !strings.Contains(body, `data-task-id="`+id+`"`) {
				t.Errorf("%s lacks %s", p, id)
			}
		}
	}
	if live := f.get(t, b, "/tasks/live"); strings.Contains(live, "<html") || strings.Contains(live, "<h1") {
		t.Error("the live fragment is a whole page")
	}
}
