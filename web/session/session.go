// Package session holds the control panel's access state in memory: the
// one-time login tokens that the tray or serve hand out, and the browser
// sessions they open. Nothing here is persisted: a restart of Hearth logs
// every browser out, and a new login URL is needed.
package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"sync"
	"time"
)

const (
	// CookieName is the session cookie.
	CookieName = "hearth_session"
	// LoginTTL is how long a one-time login token is valid.
	LoginTTL = 10 * time.Minute
	// IdleTimeout ends a session that has made no request for this long.
	IdleTimeout = 12 * time.Hour
	// maxPendingLogins bounds the unredeemed tokens kept; minting more
	// drops the oldest.
	maxPendingLogins = 32
	tokenBytes       = 32
)

// OperatorCookieName is the cookie that remembers the operator name in
// this browser across sessions (a name is no secret; the session keeps
// it too).
const OperatorCookieName = "hearth_operator"

// Flash is a one-shot message shown on the next page of a session: the
// outcome of the form the operator just posted.
type Flash struct {
	Error bool
	Text  string
	// Card, when set, names the card of the page the message belongs to
	// (the Setup page shows it there, beside the form that was posted).
	Card string
}

// Session is one logged-in browser.
type Session struct {
	csrf []byte
	// origin is how the login that opened it was asked for (see
	// NewLoginTokenFrom).
	origin string

	mu       sync.Mutex
	operator string
	flash    *Flash
	lastSeen time.Time
}

// CSRFToken is the session's anti-forgery token, sent back in a hidden
// form field or the X-CSRF-Token header of every state-changing request.
func (s *Session) CSRFToken() string { return string(s.csrf) }

// CheckCSRF reports whether token is the session's anti-forgery token
// (constant-time).
func (s *Session) CheckCSRF(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), s.csrf) == 1
}

// Origin says how the login that opened the session was asked for:
// OriginTray, OriginControl, OriginServe, or "" when not known.
func (s *Session) Origin() string { return s.origin }

// Operator is the operator name last used in this session ("" before the
// first action): forms are prefilled with it.
func (s *Session) Operator() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.operator
}

// SetOperator remembers the operator name of a successful action.
func (s *Session) SetOperator(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.operator = name
}

// SetFlash stores the message for the next page.
func (s *Session) SetFlash(f Flash) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flash = &f
}

// PopFlash returns and clears the pending message.
func (s *Session) PopFlash() (Flash, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flash == nil {
		return Flash{}, false
	}
	f := *s.flash
	s.flash = nil
	return f, true
}

type login struct {
	token   []byte
	expires time.Time
	origin  string
}

// How a login was asked for, kept on the session it opens and journaled
// with every safety setting it lowers.
const (
	// OriginTray: the tray's Open control panel (or one of its
	// notifications).
	OriginTray = "tray"
	// OriginControl: a login URL another program asked for through the
	// tray control endpoint.
	OriginControl = "control"
	// OriginServe: the sign-in link serve printed.
	OriginServe = "serve"
)

// Store mints login tokens and keeps sessions. The zero value is not
// usable; call NewStore.
type Store struct {
	now func() time.Time

	mu     sync.Mutex
	logins []login
	// sessions are keyed by the hex SHA-256 of the cookie value, so a map
	// lookup's timing says nothing about the value itself.
	sessions map[string]*Session
}

// NewStore returns an empty store; now is its clock (nil: time.Now).
func NewStore(now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{now: now, sessions: map[string]*Session{}}
}

func randomToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

func key(cookie string) string {
	h := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(h[:])
}

// NewLoginToken mints a random one-time login token, valid for LoginTTL,
// whose origin is not known.
func (s *Store) NewLoginToken() (string, error) { return s.NewLoginTokenFrom("") }

// NewLoginTokenFrom mints a random one-time login token, valid for
// LoginTTL; the session it opens carries origin (OriginTray, …).
func (s *Store) NewLoginTokenFrom(origin string) (string, error) {
	tok, err := randomToken()
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked()
	if len(s.logins) >= maxPendingLogins {
		s.logins = s.logins[1:]
	}
	s.logins = append(s.logins, login{token: []byte(tok), expires: s.now().Add(LoginTTL), origin: origin})
	return tok, nil
}

// Redeem consumes a login token: a valid, unexpired token opens a new
// session and returns it with its cookie value. A token works once; every
// pending token is compared in constant time.
func (s *Store) Redeem(token string) (*Session, string, bool) {
	if token == "" {
		return nil, "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	match := -1
	for i, l := range s.logins {
		if subtle.ConstantTimeCompare([]byte(token), l.token) == 1 {
			match = i
		}
	}
	if match < 0 {
		return nil, "", false
	}
	l := s.logins[match]
	s.logins = append(s.logins[:match], s.logins[match+1:]...)
	if !now.Before(l.expires) {
		return nil, "", false
	}
	cookie, err := randomToken()
	if err != nil {
		return nil, "", false
	}
	csrf, err := randomToken()
	if err != nil {
		return nil, "", false
	}
	sess := &Session{csrf: []byte(csrf), lastSeen: now, origin: l.origin}
	s.pruneLocked()
	s.sessions[key(cookie)] = sess
	return sess, cookie, true
}

// Lookup returns the live session of a cookie value; touch marks it used
// (a request the operator made, rather than a page's own polling, which
// must not keep a forgotten tab signed in forever).
func (s *Store) Lookup(cookie string, touch bool) (*Session, bool) {
	if cookie == "" {
		return nil, false
	}
	k := key(cookie)
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[k]
	if !ok {
		return nil, false
	}
	now := s.now()
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if now.Sub(sess.lastSeen) >= IdleTimeout {
		delete(s.sessions, k)
		return nil, false
	}
	if touch {
		sess.lastSeen = now
	}
	return sess, true
}

// End ends the session of a cookie value.
func (s *Store) End(cookie string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, key(cookie))
}

// pruneLocked drops expired login tokens and idle sessions.
func (s *Store) pruneLocked() {
	now := s.now()
	live := s.logins[:0]
	for _, l := range s.logins {
		if now.Before(l.expires) {
			live = append(live, l)
		}
	}
	s.logins = live
	for k, sess := range s.sessions {
		sess.mu.Lock()
		idle := now.Sub(sess.lastSeen) >= IdleTimeout
		sess.mu.Unlock()
		if idle {
			delete(s.sessions, k)
		}
	}
}

type ctxKey struct{}

// NewContext returns ctx carrying the request's session.
func NewContext(ctx context.Context, s *Session) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// FromContext returns the request's session; the panel's middleware puts
// it there for every route behind the login. Outside those routes it
// returns an empty session with no CSRF token (which no token matches).
func FromContext(ctx context.Context) *Session {
	if s, ok := ctx.Value(ctxKey{}).(*Session); ok {
		return s
	}
	return &Session{}
}

// Saved is a live session as it is handed to the next Hearth across an
// update (Store.Export, Store.Import): the SHA-256 of its cookie, never the
// cookie itself, so the file that carries it opens nothing by itself.
type Saved struct {
	Key      string    `json:"key"`
	CSRF     string    `json:"csrf"`
	Origin   string    `json:"origin,omitempty"`
	Operator string    `json:"operator,omitempty"`
	LastSeen time.Time `json:"last_seen"`
}

// Export returns the live sessions, for the Hearth that runs next.
func (s *Store) Export() []Saved {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked()
	out := make([]Saved, 0, len(s.sessions))
	for k, sess := range s.sessions {
		sess.mu.Lock()
		out = append(out, Saved{Key: k, CSRF: string(sess.csrf), Origin: sess.origin, Operator: sess.operator, LastSeen: sess.lastSeen})
		sess.mu.Unlock()
	}
	return out
}

// Import adds sessions an earlier Hearth exported; one idle for
// IdleTimeout or more, or malformed, is dropped.
func (s *Store) Import(saved []Saved) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for _, v := range saved {
		if len(v.Key) != sha256.Size*2 || v.CSRF == "" || now.Sub(v.LastSeen) >= IdleTimeout {
			continue
		}
		s.sessions[v.Key] = &Session{csrf: []byte(v.CSRF), origin: v.Origin, operator: v.Operator, lastSeen: v.LastSeen}
	}
}
