package session

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"
)

const (
	// NextCookieName remembers, for a short while, the panel page a
	// browser without a session asked for, so that the next login lands
	// there. It is sent only to /login.
	NextCookieName = "hearth_next"
	// NextTTL is how long that page is remembered: as long as a login
	// link is valid.
	NextTTL = LoginTTL
	// MaxNextLen bounds a next path.
	MaxNextLen = 1024
	// maxNextDecodes bounds how many layers of percent-encoding a next
	// path may carry; every layer is checked.
	maxNextDecodes = 4
)

// ValidateNext checks next, the page a login should land on: it must be a
// path of the control panel itself, so that a login link cannot send the
// browser anywhere else. Accepted: a path that starts with a single "/",
// in printable ASCII, with no backslash, and that stays so however often
// it is percent-decoded. Refused, among others: absolute URLs
// ("https://evil.example", "javascript:…"), scheme-relative "//evil",
// "/\evil" (browsers read a backslash as a slash), encoded forms of those
// ("%2F%2Fevil", "/%2F/evil", "/%5Cevil"), control characters and spaces
// (browsers drop a tab or newline inside a URL, which can turn "/\t/evil"
// into "//evil"), and the login page itself. The error names the field
// and says why.
func ValidateNext(next string) error {
	if next == "" {
		return fmt.Errorf("next: empty: give a control panel path such as /permits")
	}
	if len(next) > MaxNextLen {
		return fmt.Errorf("next: %d bytes long, at most %d", len(next), MaxNextLen)
	}
	for i := 0; i < len(next); i++ {
		if c := next[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("next %q: byte %d is a space, a control character or not ASCII; give a control panel path such as /permits", next, i)
		}
	}
	form := next
	for range maxNextDecodes {
		if why := nextProblem(form); why != "" {
			if form == next {
				return fmt.Errorf("next %q: %s", next, why)
			}
			return fmt.Errorf("next %q: once percent-decoded (%q) it %s", next, form, why)
		}
		decoded, err := url.PathUnescape(form)
		if err != nil {
			return fmt.Errorf("next %q: malformed percent-encoding", next)
		}
		if decoded == form {
			return nil
		}
		form = decoded
	}
	return fmt.Errorf("next %q: percent-encoded more than %d times", next, maxNextDecodes-1)
}

// nextProblem says what is wrong with one (raw or decoded) form of a next
// path, or "" when nothing is.
func nextProblem(s string) string {
	switch {
	case !strings.HasPrefix(s, "/"):
		return `must be a control panel path starting with "/", not an address elsewhere`
	case strings.HasPrefix(s, "//"):
		return `must start with a single "/": "//" names another host`
	case strings.Contains(s, `\`):
		return `must not contain a backslash: browsers read it as "/", and "/\" names another host`
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c == 0x7f {
			return "must not contain a control character"
		}
	}
	p := s
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if path.Clean(p) == "/login" {
		return "must not be the login page itself"
	}
	return ""
}

// SafeNext returns next when ValidateNext accepts it, and "/" (the Status
// page) otherwise: a bad next never fails a login, it only loses its way.
func SafeNext(next string) string {
	if ValidateNext(next) != nil {
		return "/"
	}
	return next
}

// NextCookieValue encodes a valid next path as a cookie value (a path may
// hold bytes a cookie value cannot, such as ';' or '"').
func NextCookieValue(next string) string { return url.QueryEscape(next) }

// NextFromCookie decodes a cookie value made by NextCookieValue and
// checks it again (a cookie can be set by anything on this host); ok is
// false when it is not a valid next path.
func NextFromCookie(value string) (next string, ok bool) {
	next, err := url.QueryUnescape(value)
	if err != nil || ValidateNext(next) != nil {
		return "", false
	}
	return next, true
}

// NextMaxAge is the Max-Age of the next cookie, in seconds.
const NextMaxAge = int(NextTTL / time.Second)
