package wake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"time"
)

// Called records a call of route's conversation (from the MCP facade, for
// every call). A call clears the wake attempts: the conversation is back.
// Only conversations with a probe or a binding are remembered, so the
// record stays as small as they are.
func (s *Service) Called(route string) {
	if route == "" {
		return
	}
	now := time.Now()
	s.mu.Lock()
	b := s.bindings[route]
	if _, probed := s.probes[route]; probed || b != nil {
		s.lastCall[route] = now
	}
	reset := b != nil && (b.Attempts > 0 || b.GaveUp)
	if reset {
		b.Attempts, b.GaveUp = 0, false
	}
	s.mu.Unlock()
	if reset {
		if err := s.saveAttempts(context.Background(), route, 0, false, nil); err != nil {
			s.log.Error("wake: clear attempts", "err", err)
		}
	}
}

// RouteProbe returns route's probe nonce and its expiry for an early
// pending answer: a fresh one, or the live one (reusable until it
// expires). A probe asks the model to repeat a code in its reply, so one
// is given only when the wake feature can use it: automatic wake is
// armed, or Hearth's ChatGPT window is open or opening (its binder reads
// the code). A conversation already bound gets none.
func (s *Service) RouteProbe(route string) (string, time.Time, bool) {
	if route == "" {
		return "", time.Time{}, false
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.bindings[route]; b != nil {
		return "", time.Time{}, false
	}
	if !s.armed && s.browser == nil && s.opening == 0 {
		return "", time.Time{}, false
	}
	if p, ok := s.probes[route]; ok && now.Before(p.expires) {
		return p.nonce, p.expires, true
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		s.log.Error("wake: make a route probe", "err", err)
		return "", time.Time{}, false
	}
	p := probe{nonce: "hrp_" + hex.EncodeToString(raw[:]), expires: now.Add(s.settings.ProbeTTL).Truncate(time.Millisecond)}
	s.probes[route] = p
	s.lastCall[route] = now // asked for by a call
	s.poke()
	return p.nonce, p.expires, true
}

// liveProbes returns nonce → route for the probes that are unexpired and
// unbound, dropping expired ones.
func (s *Service) liveProbes() map[string]string {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for route, p := range s.probes {
		if !now.Before(p.expires) {
			delete(s.probes, route)
			if s.bindings[route] == nil {
				delete(s.lastCall, route)
			}
			continue
		}
		if s.bindings[route] != nil {
			continue
		}
		out[p.nonce] = route
	}
	return out
}

// allowed reports whether a page URL is on an allowed origin, and returns
// its stable conversation URL (origin + "/c/<id>", "" when the page is
// not a conversation).
func (s *Service) allowed(raw string) (conv string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	origin := u.Scheme + "://" + u.Host
	if !slices.Contains(allowedOrigins, origin) && !slices.Contains(s.seams.origins, origin) {
		return "", false
	}
	if m := convRE.FindStringSubmatch(u.Path); m != nil {
		return origin + "/c/" + m[1], true
	}
	return "", true
}

// convRE matches a ChatGPT conversation path: /c/<id>, also under a GPT
// (/g/<gpt>/c/<id>).
var convRE = regexp.MustCompile(`(?:^|/)c/([A-Za-z0-9_-]{1,128})/?$`)

// Window returns the window's state.
func (s *Service) Window() Window {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.window
}

// Bindings returns the bindings, oldest first.
func (s *Service) Bindings() []Binding {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Binding, 0, len(s.bindings))
	for _, b := range s.bindings {
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b Binding) int { return a.BoundAt.Compare(b.BoundAt) })
	return out
}

// Unbind removes route's binding for the operator (journaled).
func (s *Service) Unbind(ctx context.Context, operator, route string) error {
	s.mu.Lock()
	b := s.bindings[route]
	s.mu.Unlock()
	if b == nil {
		return fmt.Errorf("unbind: no binding for conversation %s", route)
	}
	if err := s.deleteBinding(ctx, route); err != nil {
		return err
	}
	if _, err := s.journal.Append(ctx, KindUnbind, map[string]any{"route": route, "target_id": b.TargetID, "operator": operator}); err != nil {
		s.log.Error("wake: journal unbind", "err", err)
	}
	s.mu.Lock()
	delete(s.bindings, route)
	delete(s.probes, route)
	delete(s.lastCall, route)
	s.mu.Unlock()
	return nil
}
