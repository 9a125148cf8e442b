package wake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// readScript is the one fixed, read-only script the binder runs in an
// allow-listed page: the probe nonces in its visible text, whether a
// reply is being generated (ChatGPT's stop button), and whether it has a
// composer. It changes nothing and returns nothing else.
const readScript = `(() => {
	const text = document.body ? document.body.innerText : "";
	const found = text.match(/hrp_[0-9a-f]{32}/g) || [];
	return {
		nonces: Array.from(new Set(found)).slice(0, 16),
		generating: !!document.querySelector('[data-testid="stop-button"]'),
		composer: !!document.querySelector('#prompt-textarea'),
	};
})()`

// pageState is what readScript returns.
type pageState struct {
	Nonces     []string `json:"nonces"`
	Generating bool     `json:"generating"`
	Composer   bool     `json:"composer"`
}

// tab is a page target on an allowed origin.
type tab struct {
	ID   string
	Conv string // stable conversation URL, "" when not a conversation
}

// tabs lists the page targets on allowed origins. Targets on any other
// origin are dropped here and never read.
func (s *Service) tabs(ctx context.Context, b *Browser) ([]tab, error) {
	var res struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
			URL      string `json:"url"`
		} `json:"targetInfos"`
	}
	if err := b.Conn.Call(ctx, "", "Target.getTargets", nil, &res); err != nil {
		return nil, fmt.Errorf("list the ChatGPT window's tabs: %w", err)
	}
	var out []tab
	for _, t := range res.TargetInfos {
		if t.Type != "page" {
			continue
		}
		conv, ok := s.allowed(t.URL)
		if !ok {
			continue
		}
		out = append(out, tab{ID: t.TargetID, Conv: conv})
	}
	return out, nil
}

// attach opens a flat CDP session on target and returns it with its
// detach function.
func attach(ctx context.Context, b *Browser, target string) (string, func(), error) {
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Conn.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true}, &att); err != nil {
		return "", nil, err
	}
	return att.SessionID, func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = b.Conn.Call(dctx, "", "Target.detachFromTarget", map[string]any{"sessionId": att.SessionID}, nil)
	}, nil
}

// evaluate runs a fixed expression in session and decodes its value.
func evaluate(ctx context.Context, b *Browser, session, expr string, out any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := b.Conn.Call(ctx, session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res); err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("page script failed: %s", res.ExceptionDetails.Text)
	}
	if out == nil || len(res.Result.Value) == 0 {
		return nil
	}
	if err := json.Unmarshal(res.Result.Value, out); err != nil {
		return fmt.Errorf("decode page script result: %w", err)
	}
	return nil
}

// errNotAllowed is the answer for a tab that is not (or no longer) on an
// allowed origin, or no longer shows the bound conversation.
var errNotAllowed = errors.New("the tab is not on an allowed ChatGPT origin")

// tabConv asks the browser where target is now and returns its stable
// conversation URL ("" when not a conversation). A tab that has left the
// allowed origins is errNotAllowed: the target list a pass started from
// may be older than a navigation.
func (s *Service) tabConv(ctx context.Context, b *Browser, target string) (string, error) {
	var res struct {
		TargetInfo struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		} `json:"targetInfo"`
	}
	if err := b.Conn.Call(ctx, "", "Target.getTargetInfo", map[string]any{"targetId": target}, &res); err != nil {
		return "", fmt.Errorf("look up tab %s: %w", target, err)
	}
	conv, ok := s.allowed(res.TargetInfo.URL)
	if !ok || res.TargetInfo.Type != "page" {
		return "", fmt.Errorf("tab %s: %w", target, errNotAllowed)
	}
	return conv, nil
}

// read runs readScript in one tab, after checking that the tab is still
// on an allowed origin.
func (s *Service) read(ctx context.Context, b *Browser, target string) (pageState, error) {
	var st pageState
	if _, err := s.tabConv(ctx, b, target); err != nil {
		return st, err
	}
	s.mu.Lock()
	s.stats.PageReads[target]++
	s.mu.Unlock()
	session, detach, err := attach(ctx, b, target)
	if err != nil {
		return st, fmt.Errorf("read tab %s: %w", target, err)
	}
	defer detach()
	if err := evaluate(ctx, b, session, readScript, &st); err != nil {
		return st, fmt.Errorf("read tab %s: %w", target, err)
	}
	return st, nil
}

// scan is one binder pass: follow bindings whose tab changed, and, while
// probes are live, read the allowed tabs for their nonces and bind.
func (s *Service) scan(ctx context.Context, b *Browser) error {
	ts, err := s.tabs(ctx, b)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.stats.Scans++
	s.lastScan = time.Now()
	s.mu.Unlock()
	s.follow(ctx, ts)

	live := s.liveProbes()
	if len(live) == 0 {
		return nil
	}
	seen := map[string][]tab{} // nonce → tabs showing it
	for _, t := range ts {
		st, err := s.read(ctx, b, t.ID)
		if err != nil {
			s.log.Debug("wake: read tab", "target", t.ID, "err", err)
			continue
		}
		var mine []string
		for _, n := range st.Nonces {
			if nonceRE.MatchString(n) && live[n] != "" {
				mine = append(mine, n)
			}
		}
		if len(mine) > 1 {
			// One tab showing two conversations' nonces shows neither
			// conversation reliably.
			s.mu.Lock()
			s.stats.Ambiguous++
			s.mu.Unlock()
			continue
		}
		for _, n := range mine {
			seen[n] = append(seen[n], t)
		}
	}
	for nonce, where := range seen {
		route := live[nonce]
		if len(where) > 1 {
			s.mu.Lock()
			s.stats.Ambiguous++
			s.mu.Unlock()
			s.log.Warn("wake: a route probe is shown in more than one tab; bound none", "route", route, "tabs", len(where))
			continue
		}
		if where[0].Conv == "" {
			continue // not a /c/<id> conversation yet; look again later
		}
		if err := s.bind(ctx, route, where[0]); err != nil {
			s.log.Error("wake: bind", "err", err)
		}
	}
	return nil
}

// bind binds route to t and journals it.
func (s *Service) bind(ctx context.Context, route string, t tab) error {
	b := &Binding{Route: route, TargetID: t.ID, ConvURL: t.Conv, BoundAt: time.Now().UTC().Truncate(time.Millisecond), Live: true}
	replaced, err := s.saveBinding(ctx, b)
	if err != nil {
		return err
	}
	if _, err := s.journal.Append(ctx, KindBind, map[string]any{"route": route, "target_id": t.ID}); err != nil {
		s.log.Error("wake: journal bind", "err", err)
	}
	s.mu.Lock()
	for _, r := range replaced {
		delete(s.bindings, r)
	}
	s.bindings[route] = b
	delete(s.probes, route)
	s.mu.Unlock()
	s.log.Info("wake: conversation bound to a tab", "route", route, "target", t.ID)
	return nil
}

// follow keeps every binding on its conversation: a binding whose tab is
// gone or shows another page moves to the one tab now showing its
// conversation URL (a reload, a navigation back, a restart). The move is
// stored and journaled before it is visible.
func (s *Service) follow(ctx context.Context, ts []tab) {
	byConv := map[string][]string{}
	convOf := map[string]string{}
	for _, t := range ts {
		convOf[t.ID] = t.Conv
		if t.Conv != "" {
			byConv[t.Conv] = append(byConv[t.Conv], t.ID)
		}
	}
	type move struct{ route, from, to string }
	var moves []move
	s.mu.Lock()
	for _, b := range s.bindings {
		if convOf[b.TargetID] == b.ConvURL {
			b.Live = true
			continue
		}
		b.Live = false
		if c := byConv[b.ConvURL]; len(c) == 1 {
			moves = append(moves, move{b.Route, b.TargetID, c[0]})
		}
	}
	s.mu.Unlock()
	for _, m := range moves {
		if err := s.followTarget(ctx, m.route, m.to); err != nil {
			s.log.Error("wake: follow", "err", err)
			continue
		}
		if _, err := s.journal.Append(ctx, KindBind, map[string]any{"route": m.route, "target_id": m.to, "followed": true}); err != nil {
			s.log.Error("wake: journal bind", "err", err)
		}
		s.mu.Lock()
		if b := s.bindings[m.route]; b != nil && b.TargetID == m.from {
			b.TargetID, b.Live = m.to, true
		}
		s.mu.Unlock()
	}
}
