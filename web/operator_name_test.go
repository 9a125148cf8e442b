package web_test

import (
	"html"
	"io"
	"net/http"
	"os/user"
	"regexp"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/web/session"
)

var policyOperator = regexp.MustCompile(`id="policy-operator" name="operator" value="([^"]*)"`)

// operatorOn returns the operator name the Safety page fills in for a
// session, sending extra cookies besides the session's.
func operatorOn(t *testing.T, f *fixture, b *browser, extra ...*http.Cookie) string {
	t.Helper()
	req, err := http.NewRequest("GET", f.srv.URL+"/safety", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: session.CookieName, Value: b.cookie})
	for _, c := range extra {
		req.AddCookie(c)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	m := policyOperator.FindStringSubmatch(string(body))
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("Safety page: %d, no operator field:\n%s", res.StatusCode, body)
	}
	return html.UnescapeString(m[1])
}

// TestOperatorNameFilledAndRemembered: a fresh session's operator fields
// hold the signed-in user's name; a name used for a decision is sent back
// as an HttpOnly, SameSite=Strict cookie and fills the fields of the next
// session in that browser; a cookie holding an overlong name is ignored.
func TestOperatorNameFilledAndRemembered(t *testing.T) {
	u, err := user.Current()
	if err != nil {
		t.Skipf("the signed-in user cannot be read here: %v", err)
	}
	want := strings.TrimSpace(u.Name)
	if want == "" {
		want = u.Username
	}
	f := newFixture(t, nil)
	b := f.login(t)
	if got := operatorOn(t, f, b); got != want {
		t.Errorf("fresh session fills in %q, want the signed-in user %q", got, want)
	}

	r := f.post(t, b, "/safety/estop", "operator", "Ada Lovelace", "reason", "test")
	if r.StatusCode != http.StatusSeeOther {
		t.Fatalf("estop: %d %s", r.StatusCode, r.body)
	}
	var remembered *http.Cookie
	for _, c := range r.Cookies() {
		if c.Name == session.OperatorCookieName {
			remembered = c
		}
	}
	if remembered == nil || !remembered.HttpOnly || remembered.SameSite != http.SameSiteStrictMode || remembered.MaxAge <= 0 {
		t.Fatalf("the decision's answer does not remember the name in a strict, HttpOnly cookie: %+v", remembered)
	}
	if got := operatorOn(t, f, b); got != "Ada Lovelace" {
		t.Errorf("same session after the decision fills in %q", got)
	}

	next := f.login(t)
	if got := operatorOn(t, f, next, &http.Cookie{Name: remembered.Name, Value: remembered.Value}); got != "Ada Lovelace" {
		t.Errorf("a new session with the cookie fills in %q, want the remembered name", got)
	}
	long := &http.Cookie{Name: session.OperatorCookieName, Value: strings.Repeat("x", 101)}
	if got := operatorOn(t, f, next, long); got != want {
		t.Errorf("a cookie with an overlong name fills in %q, want the signed-in user %q", got, want)
	}
}
