package wake

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNotServing is returned by Open before Start or after Stop.
var ErrNotServing = errors.New("open the ChatGPT window: Hearth is not serving")

// Open starts Hearth's ChatGPT window (or does nothing when it is open):
// the browser from wake.browser_path or the standard places, with the
// dedicated profile under the data directory, on ChatGPTURL, as Hearth's
// own child with CDP over the pipe. The user signs in there once; the
// profile keeps the sign-in for later opens.
func (s *Service) Open(ctx context.Context) error {
	s.mu.Lock()
	if !s.serving {
		s.mu.Unlock()
		return ErrNotServing
	}
	if b := s.browser; b != nil {
		s.mu.Unlock()
		return s.focus(ctx, b)
	}
	path := s.settings.BrowserPath
	s.opening++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.opening--
		s.mu.Unlock()
	}()
	exe, err := FindBrowser(path)
	if err != nil {
		s.setWindowError(err.Error()) // names the key or the path: the operator's own setting
		return err
	}
	start := ChatGPTURL
	if s.seams.startURL != "" {
		start = s.seams.startURL
	}
	b, err := Launch(LaunchOptions{Path: exe, ProfileDir: s.profile, URL: start, ExtraArgs: s.seams.extraArgs}, s.onEvent)
	if err != nil {
		s.log.Error("wake: open the ChatGPT window", "browser", exe, "err", err)
		s.setWindowError(fmt.Sprintf("%s did not start or did not answer on its pipe (details in Hearth's log)", exe))
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := b.Conn.Call(cctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}, nil); err != nil {
		b.Close()
		err = fmt.Errorf("open the ChatGPT window: watch its tabs: %w", err)
		s.log.Error("wake: open the ChatGPT window", "err", err)
		s.setWindowError("the browser started but did not report its tabs (details in Hearth's log)")
		return err
	}
	s.mu.Lock()
	if !s.serving { // stopped meanwhile
		s.mu.Unlock()
		b.Close()
		return ErrNotServing
	}
	if s.browser != nil { // opened concurrently
		s.mu.Unlock()
		b.Close()
		return nil
	}
	s.browser = b
	s.window = Window{Open: true, Pid: b.Pid, Browser: exe}
	s.dirty = true
	s.mu.Unlock()
	s.log.Info("wake: ChatGPT window open", "browser", exe, "pid", b.Pid)
	go func() {
		<-b.Exited()
		s.mu.Lock()
		if s.browser == b {
			s.browser = nil
			s.window = Window{Browser: exe}
		}
		s.mu.Unlock()
		s.log.Info("wake: ChatGPT window closed", "pid", b.Pid)
	}()
	s.poke()
	return nil
}

// setWindowError records why the window did not open, in words fit for
// the operator's panel.
// focus answers "Open ChatGPT" when the window is open already: it brings
// a ChatGPT tab forward, or opens one when there is none.
func (s *Service) focus(ctx context.Context, b *Browser) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ts, err := s.tabs(ctx, b)
	if err != nil {
		return fmt.Errorf("open ChatGPT: %w", err)
	}
	if len(ts) > 0 {
		if err := b.Conn.Call(ctx, "", "Target.activateTarget", map[string]any{"targetId": ts[0].ID}, nil); err != nil {
			return fmt.Errorf("open ChatGPT: bring its tab forward: %w", err)
		}
		return nil
	}
	start := ChatGPTURL
	if s.seams.startURL != "" {
		start = s.seams.startURL
	}
	if err := b.Conn.Call(ctx, "", "Target.createTarget", map[string]any{"url": start}, nil); err != nil {
		return fmt.Errorf("open ChatGPT: open a tab: %w", err)
	}
	return nil
}

func (s *Service) setWindowError(msg string) {
	s.mu.Lock()
	s.window.Error = msg
	s.mu.Unlock()
}

// onEvent runs on the CDP reader: a tab appeared, navigated, reloaded or
// closed, so the binder looks again (targets only; pages are read only
// while a probe is live).
func (s *Service) onEvent(ev cdpEvent) {
	switch ev.Method {
	case "Target.targetCreated", "Target.targetInfoChanged", "Target.targetDestroyed":
		s.mu.Lock()
		s.dirty = true
		s.mu.Unlock()
		s.poke()
	}
}

func (s *Service) current() *Browser {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.browser
}
