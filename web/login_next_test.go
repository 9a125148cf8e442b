package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/web/session"
)

// navigator is a browser stand-in: a cookie jar, redirects followed, and
// every address it was sent to recorded.
type navigator struct {
	t       *testing.T
	client  *http.Client
	visited []*url.URL
}

func newNavigator(t *testing.T) *navigator {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	n := &navigator{t: t}
	n.client = &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(r *http.Request, via []*http.Request) error {
		n.visited = append(n.visited, r.URL)
		if len(via) > 5 {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	return n
}

// open GETs an address (following redirects) with optional headers and
// returns the last response and its body.
func (n *navigator) open(addr string, header ...string) (*http.Response, string) {
	n.t.Helper()
	hr, err := http.NewRequestWithContext(context.Background(), http.MethodGet, addr, nil)
	if err != nil {
		n.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		hr.Header.Set(header[i], header[i+1])
	}
	n.visited = append(n.visited, hr.URL)
	res, err := n.client.Do(hr)
	if err != nil {
		n.t.Fatalf("GET %s: %v", addr, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		n.t.Fatal(err)
	}
	return res, string(b)
}

// nextCookie is the browser's remembered landing page, as /login would
// receive it ("" when none).
func (n *navigator) nextCookie(base string) string {
	u, err := url.Parse(base + "/login")
	if err != nil {
		n.t.Fatal(err)
	}
	for _, c := range n.client.Jar.Cookies(u) {
		if c.Name == session.NextCookieName {
			return c.Value
		}
	}
	return ""
}

// landed checks the navigation ended on the panel's page path, 200,
// showing the page titled title, and never left the panel's origin.
func landed(t *testing.T, f *fixture, n *navigator, res *http.Response, body, path, title string) {
	t.Helper()
	srv, err := url.Parse(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range n.visited {
		if u.Host != srv.Host {
			t.Fatalf("the browser was sent off the panel, to %s (all: %v)", u, n.visited)
		}
	}
	if res.StatusCode != http.StatusOK || res.Request.URL.Path != path {
		t.Fatalf("landed on %s with %d, want %s with 200\n%s", res.Request.URL, res.StatusCode, path, body)
	}
	if want := `<h1 data-testid="page-title">` + title + `</h1>`; !strings.Contains(body, want) {
		t.Fatalf("%s does not show %s:\n%s", path, want, body)
	}
}

// TestLoginLandsOnNext logs in over loopback through the real router with
// a login link carrying next=/permits, as the tray's "Pending permits"
// opens it, and lands on the Permits page, signed in.
func TestLoginLandsOnNext(t *testing.T) {
	f := newFixture(t, nil)

	t.Run("NewLoginURLTo", func(t *testing.T) {
		u, err := f.panel.NewLoginURLTo(f.srv.URL+"/", "/permits")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(u, f.srv.URL+"/login?token=") || !strings.HasSuffix(u, "&next=%2Fpermits") {
			t.Fatalf("login URL %s", u)
		}
		n := newNavigator(t)
		res, body := n.open(u)
		landed(t, f, n, res, body, "/permits", "Permits")
		// Signed in: another page opens too.
		res, body = n.open(f.srv.URL + "/safety")
		landed(t, f, n, res, body, "/safety", "Safety")
	})

	t.Run("next with a query", func(t *testing.T) {
		u, err := f.panel.NewLoginURLTo(f.srv.URL, "/tasks?x=1")
		if err != nil {
			t.Fatal(err)
		}
		n := newNavigator(t)
		res, body := n.open(u)
		landed(t, f, n, res, body, "/tasks", "Tasks")
		if res.Request.URL.RawQuery != "x=1" {
			t.Fatalf("landed on %s, the query was lost", res.Request.URL)
		}
	})

	t.Run("unescaped next in a hand-written link", func(t *testing.T) {
		u, err := f.panel.NewLoginURL(f.srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		n := newNavigator(t)
		res, body := n.open(u + "&next=/safety")
		landed(t, f, n, res, body, "/safety", "Safety")
	})

	t.Run("no next lands on Setup while setup is not done", func(t *testing.T) {
		u, err := f.panel.NewLoginURL(f.srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		n := newNavigator(t)
		res, body := n.open(u)
		landed(t, f, n, res, body, "/setup", "Setup")
	})

	t.Run("NewLoginURLTo refuses a next that is not a panel path", func(t *testing.T) {
		for _, next := range []string{"", "//evil.example", "https://evil.example/", `/\evil.example`, "permits"} {
			u, err := f.panel.NewLoginURLTo(f.srv.URL, next)
			if err == nil || u != "" || !strings.Contains(err.Error(), "next") {
				t.Errorf("NewLoginURLTo(%q) = %q, %v; want an error naming next", next, u, err)
			}
		}
	})
}

// TestLoginRefusesForeignNext tries login links whose next names another
// site (or smuggles one): each login still works, and lands on the
// Status page of the panel itself, never elsewhere.
func TestLoginRefusesForeignNext(t *testing.T) {
	f := newFixture(t, nil)
	hostile := []string{
		"//evil.example",
		"//evil.example/permits",
		"http://evil.example/",
		"https:evil.example",
		"javascript:alert(1)",
		`/\evil.example`,
		`\\evil.example`,
		"%2F%2Fevil.example",
		"/%2F%2Fevil.example",
		"/%5Cevil.example",
		"/\t/evil.example",
		"/permits\r\nLocation: http://evil.example/",
		"/login",
	}
	for _, next := range hostile {
		t.Run(next, func(t *testing.T) {
			u, err := f.panel.NewLoginURL(f.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			n := newNavigator(t)
			res, body := n.open(u + "&next=" + url.QueryEscape(next))
			landed(t, f, n, res, body, "/setup", "Setup")
		})
	}
	// The raw form a hand-made link would carry: the query parser sees
	// "//evil.example" too.
	u, err := f.panel.NewLoginURL(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	r := f.do(t, req{method: "GET", path: strings.TrimPrefix(u, f.srv.URL) + "&next=//evil.example"})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/setup" {
		t.Fatalf("raw next=//evil.example: %d Location %q", r.StatusCode, r.Header.Get("Location"))
	}
	if !strings.Contains(f.log.String(), "next is not a panel path") {
		t.Errorf("the ignored next was not logged:\n%s", f.log.String())
	}
}

// TestLoginRemembersRequestedPage: a browser without a session that opens
// a panel page gets the 401 page, and the next login without a next
// parameter (the tray's "Open control panel") lands on that page.
func TestLoginRemembersRequestedPage(t *testing.T) {
	f := newFixture(t, nil)
	login := func(t *testing.T) string {
		t.Helper()
		u, err := f.panel.NewLoginURL(f.srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}

	t.Run("page then login", func(t *testing.T) {
		n := newNavigator(t)
		res, _ := n.open(f.srv.URL + "/permits")
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("/permits without a session: %d", res.StatusCode)
		}
		var c *http.Cookie
		for _, x := range res.Cookies() {
			if x.Name == session.NextCookieName {
				c = x
			}
		}
		if c == nil || c.Path != "/login" || !c.HttpOnly || c.MaxAge != session.NextMaxAge || c.SameSite != http.SameSiteLaxMode {
			t.Fatalf("next cookie %+v", c)
		}
		res, body := n.open(login(t))
		landed(t, f, n, res, body, "/permits", "Permits")
		if v := n.nextCookie(f.srv.URL); v != "" {
			t.Fatalf("the next cookie outlived the login: %q", v)
		}
		// Remembered once: a later login lands on the usual first page again.
		res, body = n.open(login(t))
		landed(t, f, n, res, body, "/setup", "Setup")
	})

	t.Run("an explicit next wins", func(t *testing.T) {
		n := newNavigator(t)
		n.open(f.srv.URL + "/tasks")
		u, err := f.panel.NewLoginURLTo(f.srv.URL, "/safety")
		if err != nil {
			t.Fatal(err)
		}
		res, body := n.open(u)
		landed(t, f, n, res, body, "/safety", "Safety")
	})

	t.Run("not remembered: polling, htmx, resources, unknown paths", func(t *testing.T) {
		n := newNavigator(t)
		n.open(f.srv.URL + "/ledger")
		n.open(f.srv.URL + "/tasks/live")
		n.open(f.srv.URL+"/permits", "HX-Request", "true")
		n.open(f.srv.URL+"/safety", "Sec-Fetch-Dest", "image")
		n.open(f.srv.URL + "/favicon.ico")
		n.open(f.srv.URL + "/admin")
		res, body := n.open(login(t))
		landed(t, f, n, res, body, "/ledger", "Ledger")
	})

	t.Run("a navigation with Sec-Fetch-Dest document is remembered", func(t *testing.T) {
		n := newNavigator(t)
		n.open(f.srv.URL+"/setup", "Sec-Fetch-Dest", "document")
		res, body := n.open(login(t))
		landed(t, f, n, res, body, "/setup", "Setup")
	})

	t.Run("an expired link's next is remembered", func(t *testing.T) {
		n := newNavigator(t)
		old, err := f.panel.NewLoginURLTo(f.srv.URL, "/permits")
		if err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(session.LoginTTL + time.Second)
		if res, _ := n.open(old); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("expired link: %d", res.StatusCode)
		}
		res, body := n.open(login(t))
		landed(t, f, n, res, body, "/permits", "Permits")
	})

	t.Run("a forged next cookie is ignored", func(t *testing.T) {
		n := newNavigator(t)
		u, err := url.Parse(f.srv.URL + "/login")
		if err != nil {
			t.Fatal(err)
		}
		n.client.Jar.SetCookies(u, []*http.Cookie{{Name: session.NextCookieName, Value: url.QueryEscape("//evil.example"), Path: "/login"}})
		res, body := n.open(login(t))
		landed(t, f, n, res, body, "/setup", "Setup")
	})
}
