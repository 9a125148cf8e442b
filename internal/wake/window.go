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
	if s.browser != nil {
		s.mu.Unlock()
		return nil
	}
	path := s.settings.BrowserPath
	s.mu.Unlock()
	exe, err := FindBrowser(path)
	if err != nil {
		s.setWindowError(err.Error()) // names the key or the path: the operator's own setting
		return err
	}
	start := ChatGPTURL
	if s.hooks.startURL != "" {
		start = s.hooks.startURL
	}
	b, err := Launch(LaunchOptions{Path: exe, ProfileDir: s.profile, URL: start, ExtraArgs: s.hooks.extraArgs}, s.onEvent)
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
