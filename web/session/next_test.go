package session

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestValidateNext is the table of next paths a login link may carry:
// panel paths pass, and every way of naming another origin (or smuggling
// one past a browser's URL parser) falls back to "/".
func TestValidateNext(t *testing.T) {
	good := []string{
		"/",
		"/permits",
		"/tasks",
		"/safety",
		"/permits#rules",
		"/recipes?run=r-1",
		"/permits?state=pending&x=1",
		"/a/b/c",
		"/%7Euser",                              // decodes to "/~user"
		"/recipes?q=a%2Fb",                      // an encoded slash inside a query is just data
		"/login-help",                           // not the login page
		"/" + strings.Repeat("a", MaxNextLen-1), // exactly at the bound
	}
	for _, next := range good {
		if err := ValidateNext(next); err != nil {
			t.Errorf("ValidateNext(%q) = %v, want nil", next, err)
		}
		if got := SafeNext(next); got != next {
			t.Errorf("SafeNext(%q) = %q", next, got)
		}
	}

	bad := []struct {
		name, next, why string
	}{
		{"empty", "", "empty"},
		{"too long", "/" + strings.Repeat("a", MaxNextLen), "at most"},
		{"absolute http", "http://evil.example/", "not an address elsewhere"},
		{"absolute https", "https://evil.example", "not an address elsewhere"},
		{"scheme without slashes", "https:evil.example", "not an address elsewhere"},
		{"javascript", "javascript:alert(1)", "not an address elsewhere"},
		{"data", "data:text/html,hi", "not an address elsewhere"},
		{"relative", "permits", "not an address elsewhere"},
		{"dot relative", "./permits", "not an address elsewhere"},
		{"host only", "evil.example", "not an address elsewhere"},
		{"scheme relative", "//evil.example", `single "/"`},
		{"scheme relative with path", "//evil.example/permits", `single "/"`},
		{"triple slash", "///evil.example", `single "/"`},
		{"slash backslash", `/\evil.example`, "backslash"},
		{"backslash slash", `\/evil.example`, "not an address elsewhere"},
		{"double backslash", `\\evil.example`, "not an address elsewhere"},
		{"backslash inside", `/permits\..\..\evil`, "backslash"},
		{"encoded double slash", "%2F%2Fevil.example", "not an address elsewhere"},
		{"encoded double slash lower case", "%2f%2fevil.example", "not an address elsewhere"},
		{"slash then encoded slash", "/%2Fevil.example", "once percent-decoded"},
		{"slash then encoded slashes", "/%2F%2Fevil.example", "once percent-decoded"},
		{"slash then encoded backslash", "/%5Cevil.example", "once percent-decoded"},
		{"double encoded slash", "/%252Fevil.example", "once percent-decoded"},
		{"double encoded backslash", "/%255cevil.example", "once percent-decoded"},
		{"many times encoded", "/%2525252Fevil.example", "percent-encoded more than"},
		{"malformed encoding", "/permits%zz", "malformed percent-encoding"},
		{"truncated encoding", "/permits%2", "malformed percent-encoding"},
		{"tab", "/\t/evil.example", "control character"},
		{"newline", "/permits\n", "control character"},
		{"carriage return", "/permits\rSet-Cookie: x=y", "control character"},
		{"NUL", "/permits\x00", "control character"},
		{"DEL", "/permits\x7f", "control character"},
		{"encoded tab", "/%09/evil.example", "once percent-decoded"},
		{"encoded newline", "/permits%0d%0aSet-Cookie:x=y", "once percent-decoded"},
		{"encoded NUL", "/permits%00", "once percent-decoded"},
		{"leading space", " /permits", "space"},
		{"inner space", "/per mits", "space"},
		{"non-ASCII", "/permits\u00e9", "not ASCII"},
		{"fullwidth solidus", "/\uff0fevil.example", "not ASCII"},
		{"line separator", "/permits\u2028", "not ASCII"},
		{"login page", "/login", "login page"},
		{"login page with token", "/login?token=abc", "login page"},
		{"login page dotted", "/./login", "login page"},
		{"login page encoded", "/%6cogin", "login page"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateNext(c.next)
			if err == nil {
				t.Fatalf("ValidateNext(%q) accepted it", c.next)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "next") || !strings.Contains(msg, c.why) {
				t.Fatalf("ValidateNext(%q) = %q, want it to name the field and say %q", c.next, msg, c.why)
			}
			if got := SafeNext(c.next); got != "/" {
				t.Fatalf("SafeNext(%q) = %q, want /", c.next, got)
			}
		})
	}
}

// TestNextCookie round-trips a next path through a real cookie header and
// refuses a forged cookie value that is not a panel path.
func TestNextCookie(t *testing.T) {
	for _, next := range []string{"/permits", `/recipes?q="a";b,c`} {
		rec := &http.Response{Header: http.Header{}}
		rec.Header.Add("Set-Cookie", (&http.Cookie{Name: NextCookieName, Value: NextCookieValue(next)}).String())
		cs := rec.Cookies()
		if len(cs) != 1 {
			t.Fatalf("cookie for %q did not survive: %v", next, rec.Header)
		}
		if got, ok := NextFromCookie(cs[0].Value); !ok || got != next {
			t.Fatalf("NextFromCookie = %q %v, want %q", got, ok, next)
		}
	}
	for _, forged := range []string{url.QueryEscape("//evil.example"), "https%3A%2F%2Fevil.example", "%zz", ""} {
		if got, ok := NextFromCookie(forged); ok {
			t.Errorf("NextFromCookie(%q) = %q, accepted", forged, got)
		}
	}
	if NextMaxAge != 600 {
		t.Errorf("NextMaxAge = %d, want the login link's 10 minutes", NextMaxAge)
	}
}
