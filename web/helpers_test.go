package web_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/web"
	"github.com/hearth-dev/hearth/web/session"
)

// clock is a test clock the panel's sessions read.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// syncBuffer is a log sink safe for concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fixture is a real in-process Hearth (ask mode) and a panel over it,
// built by the real router on an httptest server with a clock the test
// moves.
type fixture struct {
	in    *hearthtest.Instance
	panel *web.Panel
	srv   *httptest.Server
	clock *clock
	log   *syncBuffer
	// logLevel is the panel log's level (INFO unless a test lowers it).
	logLevel *slog.LevelVar
}

func newFixture(t *testing.T, edit func(*config.Config)) *fixture {
	t.Helper()
	return newFixtureWith(t, edit, nil)
}

// newFixtureWith is newFixture with the app's options changed by opts.
func newFixtureWith(t *testing.T, edit func(*config.Config), opts func(*app.Options)) *fixture {
	t.Helper()
	return fixtureOf(t, hearthtest.StartWith(t, edit, opts))
}

// fixtureOf is a panel over in, a Hearth the test started.
func fixtureOf(t *testing.T, in *hearthtest.Instance) *fixture {
	t.Helper()
	return fixtureOfWith(t, in, nil)
}

// fixtureOfWith is fixtureOf with the panel's dependencies changed by
// edit (after the fixture's clock and log are in them).
func fixtureOfWith(t *testing.T, in *hearthtest.Instance, edit func(*web.Deps)) *fixture {
	t.Helper()
	f := &fixture{in: in, clock: &clock{t: time.Now()}, log: &syncBuffer{}, logLevel: &slog.LevelVar{}}
	deps := in.App.PanelDeps()
	deps.Now = f.clock.Now
	deps.Log = slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: f.logLevel}))
	if edit != nil {
		edit(&deps)
	}
	p, err := web.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	f.panel = p
	f.srv = httptest.NewServer(p.Handler())
	t.Cleanup(f.srv.Close)
	return f
}

// browser is one logged-in session: its cookie and CSRF token.
type browser struct {
	cookie string
	csrf   string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// login redeems a fresh login URL and reads the session's CSRF token from
// the Safety page's forms.
func (f *fixture) login(t *testing.T) *browser {
	t.Helper()
	return f.loginFrom(t, "")
}

// loginFrom is login with a login URL minted for origin
// (session.OriginTray, …; "" for none).
func (f *fixture) loginFrom(t *testing.T, origin string) *browser {
	t.Helper()
	u, err := f.panel.LoginURLFrom(f.srv.URL, "", origin)
	if err != nil {
		t.Fatal(err)
	}
	resp := f.do(t, req{method: "GET", path: strings.TrimPrefix(u, f.srv.URL)})
	// Status, or Setup while setup is not done.
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/" && loc != "/setup" {
		t.Fatalf("login: %d %v", resp.StatusCode, resp.Header)
	}
	b := &browser{}
	for _, c := range resp.Cookies() {
		if c.Name == session.CookieName {
			b.cookie = c.Value
		}
	}
	if b.cookie == "" {
		t.Fatal("login set no session cookie")
	}
	page := f.do(t, req{method: "GET", path: "/safety", b: b})
	m := csrfField.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no CSRF field on /safety: %d %s", page.StatusCode, page.body)
	}
	b.csrf = m[1]
	return b
}

// req is one request of a test.
type req struct {
	method, path string
	b            *browser // session (nil: none)
	host         string   // Host header ("": the server's)
	origin       string   // Origin header
	fetchSite    string   // Sec-Fetch-Site header
	form         url.Values
	csrf         string // csrf form field; "-" omits it; "" uses b's
	csrfHeader   bool   // send the token as X-CSRF-Token instead
}

type resp struct {
	*http.Response
	body string
}

func (f *fixture) do(t *testing.T, r req) resp {
	t.Helper()
	var body io.Reader
	form := url.Values{}
	for k, v := range r.form {
		form[k] = v
	}
	tok := r.csrf
	if tok == "" && r.b != nil {
		tok = r.b.csrf
	}
	if r.method == http.MethodPost && tok != "-" && !r.csrfHeader {
		form.Set("csrf", tok)
	}
	if r.method == http.MethodPost {
		body = strings.NewReader(form.Encode())
	}
	hr, err := http.NewRequestWithContext(context.Background(), r.method, f.srv.URL+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.method == http.MethodPost {
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if r.csrfHeader {
		hr.Header.Set("X-CSRF-Token", tok)
	}
	if r.host != "" {
		hr.Host = r.host
	}
	if r.origin != "" {
		hr.Header.Set("Origin", r.origin)
	}
	if r.fetchSite != "" {
		hr.Header.Set("Sec-Fetch-Site", r.fetchSite)
	}
	if r.b != nil {
		hr.AddCookie(&http.Cookie{Name: session.CookieName, Value: r.b.cookie})
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp{res, string(b)}
}

// post is a form POST of a logged-in browser.
func (f *fixture) post(t *testing.T, b *browser, path string, kv ...string) resp {
	t.Helper()
	form := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		form.Set(kv[i], kv[i+1])
	}
	return f.do(t, req{method: "POST", path: path, b: b, form: form})
}

// get is a GET of a logged-in browser that must answer 200.
func (f *fixture) get(t *testing.T, b *browser, path string) string {
	t.Helper()
	r := f.do(t, req{method: "GET", path: path, b: b})
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", path, r.StatusCode, r.body)
	}
	return r.body
}

// latched reports the e-stop latch straight from governance.
func (f *fixture) latched(t *testing.T) bool {
	t.Helper()
	st, err := f.in.App.Gov.EStop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Latched
}

// await polls the conversation until the future's result arrives and
// returns its envelope.
func await(t *testing.T, c *hearthtest.Client, futureID string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r := c.Call("machine", map[string]any{"operation": "host_info"})
		for _, a := range r.Arrivals() {
			if a["future_id"] == futureID {
				env, _ := a["envelope"].(map[string]any)
				return env
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no arrival for %s", futureID)
	return nil
}

// execNeedingPermit makes an exec call that waits for a permit in ask
// mode and returns its permit and future ids.
func execNeedingPermit(t *testing.T, c *hearthtest.Client, text string) (permitID, futureID string) {
	t.Helper()
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{text}})
	permitID, _ = r.Env["permit_id"].(string)
	futureID, _ = r.Env["future_id"].(string)
	if r.State() != "pending" || permitID == "" || futureID == "" {
		t.Fatalf("exec in ask mode should wait for a permit: %s", r.Raw)
	}
	return permitID, futureID
}
