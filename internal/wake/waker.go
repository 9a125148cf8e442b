package wake

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// focusScript focuses the tab's composer (a fixed script; false when the
// page has none).
const focusScript = `(() => {
	const c = document.querySelector('#prompt-textarea');
	if (!c) return false;
	c.focus();
	return true;
})()`

// sendScript clicks the send button when the composer still holds text
// after Enter (a fixed script; true when it clicked).
const sendScript = `(() => {
	const c = document.querySelector('#prompt-textarea');
	const text = c ? (c.value !== undefined ? c.value : c.innerText) : "";
	const b = document.querySelector('[data-testid="send-button"]');
	if (!b || !text || !text.trim() || b.disabled) return false;
	b.click();
	return true;
})()`

// run is the binder's and the waker's loop: it sleeps until a kick (a tab
// changed, a probe was handed out, the window opened, the operator acted)
// or, only while there is something to do, a slow timer.
func (s *Service) run(ctx context.Context) {
	for {
		s.step(ctx)
		var timer *time.Timer
		var tc <-chan time.Time
		if d := s.nextWait(); d > 0 {
			timer = time.NewTimer(d)
			tc = timer.C
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-s.kick:
		case <-tc:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// nextWait is how long the loop may sleep without a kick; 0 means until
// one.
func (s *Service) nextWait() time.Duration {
	probes := len(s.liveProbes()) > 0
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.browser == nil {
		return 0
	}
	switch {
	case s.armed && len(s.bindings) > 0:
		// Sooner when a seen wake falls due before the next check, so that
		// a wake follows its debounce, not the check's phase.
		if !s.nextDue.IsZero() {
			if d := time.Until(s.nextDue); d < CheckEvery {
				return max(d, time.Millisecond)
			}
		}
		return CheckEvery
	case probes:
		return ScanEvery
	}
	return 0
}

func (s *Service) step(ctx context.Context) {
	s.mu.Lock()
	s.stats.Steps++
	s.mu.Unlock()
	b := s.current()
	if b == nil {
		return
	}
	s.mu.Lock()
	due := (s.dirty || time.Since(s.lastScan) >= ScanEvery) && !s.seams.hold
	if due {
		s.dirty = false
	}
	s.mu.Unlock()
	if due {
		if err := s.scan(ctx, b); err != nil && ctx.Err() == nil {
			s.log.Debug("wake: binder pass", "err", err)
		}
	}
	if s.Armed() {
		s.wakeDue(ctx, b)
	}
}

// wakeDue wakes every bound conversation that is due.
func (s *Service) wakeDue(ctx context.Context, b *Browser) {
	set := s.Settings()
	now := time.Now()
	var next time.Time // the earliest time a waiting wake becomes due
	due := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	defer func() {
		s.mu.Lock()
		s.stats.Checks++
		s.nextDue = next
		s.mu.Unlock()
	}()
	for _, bd := range s.Bindings() {
		if bd.GaveUp {
			continue
		}
		n, newest, err := s.undelivered(ctx, bd.Route)
		if err != nil {
			s.log.Error("wake: check arrivals", "err", err)
			return
		}
		if n == 0 {
			continue // nothing terminal waits
		}
		if now.Sub(newest) < set.Debounce {
			due(newest.Add(set.Debounce)) // results are still coming
			continue
		}
		if last := s.lastCallOf(bd.Route); now.Sub(last) < set.Quiet {
			due(last.Add(set.Quiet))
			continue
		}
		if bd.LastWakeAt != nil && now.Sub(*bd.LastWakeAt) < set.Cooldown {
			due(bd.LastWakeAt.Add(set.Cooldown))
			continue
		}
		if bd.Attempts >= set.MaxAttempts {
			s.giveUp(ctx, bd)
			continue
		}
		if !bd.Live {
			continue
		}
		err = s.wakeTab(ctx, b, bd, WakePrompt)
		if errors.Is(err, errBusy) {
			continue
		}
		if err != nil {
			s.log.Warn("wake: wake a tab", "target", bd.TargetID, "err", err)
		}
	}
}

func (s *Service) lastCallOf(route string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.lastCall[route]; ok {
		return t
	}
	// Not called since Hearth started: count from the start.
	return s.started
}

func (s *Service) giveUp(ctx context.Context, bd Binding) {
	s.mu.Lock()
	if b := s.bindings[bd.Route]; b != nil {
		b.GaveUp = true
	}
	s.stats.GiveUps++
	s.mu.Unlock()
	if err := s.saveAttempts(ctx, bd.Route, bd.Attempts, true, nil); err != nil {
		s.log.Error("wake: record give-up", "err", err)
	}
	if _, err := s.journal.Append(ctx, KindGiveUp, map[string]any{"route": bd.Route, "target_id": bd.TargetID, "attempts": bd.Attempts}); err != nil {
		s.log.Error("wake: journal give-up", "err", err)
	}
	s.log.Info("wake: gave up waking a conversation", "route", bd.Route, "attempts", bd.Attempts)
}

// sameConv checks that bd's tab still shows bd's conversation on an
// allowed origin, as the browser says now (the binder learns of a
// navigation only at its next pass).
func (s *Service) sameConv(ctx context.Context, b *Browser, bd Binding) error {
	conv, err := s.tabConv(ctx, b, bd.TargetID)
	if err != nil {
		return err
	}
	if conv != bd.ConvURL {
		return fmt.Errorf("tab %s no longer shows the bound conversation: %w", bd.TargetID, errNotAllowed)
	}
	return nil
}

// errBusy is wakeTab's answer when the tab is generating a reply or has
// no composer: not an attempt.
var errBusy = errors.New("the tab is busy")

// wakeTab types prompt into bd's tab and sends it, counting the attempt
// and journaling it. A tab generating a reply is left alone (errBusy).
func (s *Service) wakeTab(ctx context.Context, b *Browser, bd Binding, prompt string) error {
	if err := s.sameConv(ctx, b, bd); err != nil {
		return err
	}
	st, err := s.read(ctx, b, bd.TargetID)
	if err != nil {
		return err
	}
	if st.Generating {
		s.mu.Lock()
		s.stats.SkippedGen++
		s.mu.Unlock()
		return errBusy
	}
	if !st.Composer {
		return fmt.Errorf("%w: no composer in the tab", errBusy)
	}
	if err := s.typeAndSend(ctx, b, bd, prompt); err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	s.mu.Lock()
	attempts := bd.Attempts + 1
	if cur := s.bindings[bd.Route]; cur != nil {
		cur.Attempts++
		attempts = cur.Attempts
		cur.LastWakeAt = &now
	}
	s.stats.Wakes++
	s.mu.Unlock()
	if err := s.saveAttempts(ctx, bd.Route, attempts, false, &now); err != nil {
		s.log.Error("wake: record wake", "err", err)
	}
	if _, err := s.journal.Append(ctx, KindWake, map[string]any{"route": bd.Route, "target_id": bd.TargetID, "attempt": attempts}); err != nil {
		s.log.Error("wake: journal wake", "err", err)
	}
	s.log.Info("wake: woke a conversation", "route", bd.Route, "target", bd.TargetID, "attempt", attempts)
	return nil
}

// typeAndSend brings the tab forward, focuses its composer, inserts the
// prompt as typed text and presses Enter (clicking send if Enter did not
// send it).
func (s *Service) typeAndSend(ctx context.Context, b *Browser, bd Binding, prompt string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	target := bd.TargetID
	if err := b.Conn.Call(ctx, "", "Target.activateTarget", map[string]any{"targetId": target}, nil); err != nil {
		return fmt.Errorf("bring the tab forward: %w", err)
	}
	session, detach, err := attach(ctx, b, target)
	if err != nil {
		return fmt.Errorf("attach to the tab: %w", err)
	}
	defer detach()
	var focused bool
	if err := evaluate(ctx, b, session, focusScript, &focused); err != nil {
		return fmt.Errorf("focus the composer: %w", err)
	}
	if !focused {
		return fmt.Errorf("%w: no composer in the tab", errBusy)
	}
	// Once more right before typing: the tab may have navigated since.
	if err := s.sameConv(ctx, b, bd); err != nil {
		return err
	}
	if err := b.Conn.Call(ctx, session, "Input.insertText", map[string]any{"text": prompt}, nil); err != nil {
		return fmt.Errorf("type the prompt: %w", err)
	}
	// And once more before sending: if the tab moved while the text went
	// in, the text stays unsent in whatever page it is on now.
	if err := s.sameConv(ctx, b, bd); err != nil {
		return err
	}
	for _, typ := range []string{"keyDown", "keyUp"} {
		key := map[string]any{"type": typ, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "nativeVirtualKeyCode": 13}
		if typ == "keyDown" {
			key["text"] = "\r"
		}
		if err := b.Conn.Call(ctx, session, "Input.dispatchKeyEvent", key, nil); err != nil {
			return fmt.Errorf("press Enter: %w", err)
		}
	}
	var clicked bool
	if err := evaluate(ctx, b, session, sendScript, &clicked); err != nil {
		return fmt.Errorf("send the prompt: %w", err)
	}
	return nil
}

// WakeTab wakes route's bound tab with prompt for a due continuation
// (run.schedule_continuation with target {browser_tab}). tab must be
// "bound", the bound tab's target id or its conversation URL. It reports
// why nothing was sent: not armed, not bound, the window closed, busy.
func (s *Service) WakeTab(ctx context.Context, route, tab, prompt string) error {
	if !s.Armed() {
		return errors.New("wake.armed is false")
	}
	s.mu.Lock()
	bp := s.bindings[route]
	var bd Binding
	if bp != nil {
		bd = *bp
	}
	s.mu.Unlock()
	if bp == nil {
		return errors.New("this conversation is not bound to a tab of Hearth's ChatGPT window")
	}
	if tab != "bound" && tab != bd.TargetID && tab != bd.ConvURL {
		return fmt.Errorf("browser_tab %q is not this conversation's bound tab (use \"bound\")", tab)
	}
	b := s.current()
	if b == nil || !bd.Live {
		return errors.New("the conversation's tab is not open in Hearth's ChatGPT window")
	}
	return s.wakeTab(ctx, b, bd, prompt)
}
