package session

import (
	"strings"
	"testing"
	"time"
)

func TestStore(t *testing.T) {
	now := time.Now()
	s := NewStore(func() time.Time { return now })
	tok, err := s.NewLoginToken()
	if err != nil || len(tok) != 43 {
		t.Fatalf("token %q %v", tok, err)
	}
	sess, cookie, ok := s.Redeem(tok)
	if !ok || cookie == "" || cookie == tok || len(sess.CSRFToken()) != 43 {
		t.Fatal("redeem")
	}
	if _, _, ok := s.Redeem(tok); ok {
		t.Fatal("a token worked twice")
	}
	if got, ok := s.Lookup(cookie, true); !ok || got != sess {
		t.Fatal("lookup")
	}
	if !sess.CheckCSRF(sess.CSRFToken()) || sess.CheckCSRF("") || sess.CheckCSRF(sess.CSRFToken()+"x") {
		t.Fatal("CSRF check")
	}
	if (&Session{}).CheckCSRF("") {
		t.Fatal("an empty token matched a session without one")
	}
	sess.SetFlash(Flash{Text: "hi"})
	if f, ok := sess.PopFlash(); !ok || f.Text != "hi" {
		t.Fatal("flash")
	}
	if _, ok := sess.PopFlash(); ok {
		t.Fatal("flash shown twice")
	}
	// Only the newest maxPendingLogins tokens are kept.
	first, _ := s.NewLoginToken()
	for range maxPendingLogins {
		if _, err := s.NewLoginToken(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, ok := s.Redeem(first); ok {
		t.Fatal("the oldest token survived the cap")
	}
	now = now.Add(IdleTimeout / 2)
	if _, ok := s.Lookup(cookie, false); !ok {
		t.Fatal("session ended early")
	}
	now = now.Add(IdleTimeout / 2)
	if _, ok := s.Lookup(cookie, true); ok {
		t.Fatal("an idle session survived")
	}
}

// The origin a login token was minted for is the origin of the session
// it opens; a token minted without one opens a session without one.
func TestSessionCarriesItsLoginsOrigin(t *testing.T) {
	s := NewStore(nil)
	for _, origin := range []string{OriginTray, OriginControl, OriginServe, ""} {
		tok, err := s.NewLoginTokenFrom(origin)
		if err != nil {
			t.Fatal(err)
		}
		sess, _, ok := s.Redeem(tok)
		if !ok {
			t.Fatalf("redeem the %q token", origin)
		}
		if sess.Origin() != origin {
			t.Fatalf("session of a %q login has origin %q", origin, sess.Origin())
		}
	}
}

// TestExportImportKeepsSessions: a session exported by one store and
// imported by another (the next Hearth, after an update) is signed in
// there with the same CSRF token and operator; an idle one is not; the
// export holds the cookie's hash, never the cookie.
func TestExportImportKeepsSessions(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	a := NewStore(clock)
	tok, err := a.NewLoginToken()
	if err != nil {
		t.Fatal(err)
	}
	sess, cookie, ok := a.Redeem(tok)
	if !ok {
		t.Fatal("redeem")
	}
	sess.SetOperator("Ann")
	saved := a.Export()
	if len(saved) != 1 || saved[0].Key == cookie || strings.Contains(saved[0].Key, cookie) {
		t.Fatalf("export: %+v", saved)
	}
	b := NewStore(clock)
	b.Import(saved)
	got, ok := b.Lookup(cookie, true)
	if !ok || got.CSRFToken() != sess.CSRFToken() || got.Operator() != "Ann" {
		t.Fatalf("imported session: %v %+v", ok, got)
	}
	later := NewStore(func() time.Time { return now.Add(IdleTimeout) })
	later.Import(saved)
	if _, ok := later.Lookup(cookie, false); ok {
		t.Fatal("an idle session was imported")
	}
}
