//go:build !windows

package wake

import (
	"context"
	"fmt"
)

// HeadlessArgs are the flags every test browser runs with.
var HeadlessArgs = []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync"}

// TestBrowser is the browser the tests start (Debian's chromium).
const TestBrowser = "/usr/bin/chromium"

// AllowOriginForTest adds origin (a fake ChatGPT server on loopback) to
// the binder's allow-list and makes the window headless on about:blank.
// It is a test-only seam: no config key or tool reaches it.
func AllowOriginForTest(s *Service, origin string) {
	s.seams.origins = append(s.seams.origins, origin)
	s.seams.extraArgs = HeadlessArgs
	s.seams.startURL = "about:blank"
}

func browserForTest(s *Service) (*Browser, error) {
	b := s.current()
	if b == nil {
		return nil, fmt.Errorf("the ChatGPT window is not open")
	}
	return b, nil
}

// OpenTabForTest opens a tab on url in the window and returns its target id.
func OpenTabForTest(ctx context.Context, s *Service, url string) (string, error) {
	b, err := browserForTest(s)
	if err != nil {
		return "", err
	}
	var res struct {
		TargetID string `json:"targetId"`
	}
	err = b.Conn.Call(ctx, "", "Target.createTarget", map[string]any{"url": url}, &res)
	return res.TargetID, err
}

// CloseTabForTest closes a tab.
func CloseTabForTest(ctx context.Context, s *Service, target string) error {
	b, err := browserForTest(s)
	if err != nil {
		return err
	}
	return b.Conn.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": target}, nil)
}

// PageForTest runs a Page domain command (navigate, reload) in a tab.
func PageForTest(ctx context.Context, s *Service, target, method string, params any) error {
	b, err := browserForTest(s)
	if err != nil {
		return err
	}
	session, detach, err := attach(ctx, b, target)
	if err != nil {
		return err
	}
	defer detach()
	return b.Conn.Call(ctx, session, method, params, nil)
}

// BrowserPidForTest is the window's browser process id.
func BrowserPidForTest(s *Service) int {
	if b := s.current(); b != nil {
		return b.Pid
	}
	return 0
}

// ProfileDirForTest is the window's profile directory.
func ProfileDirForTest(s *Service) string { return s.profile }

// PokeForTest wakes the loop once.
func PokeForTest(s *Service) { s.poke() }

// HoldScansForTest stops (or resumes) binder passes, so that a test can
// set several pages up before the binder looks at any.
func HoldScansForTest(s *Service, hold bool) {
	s.mu.Lock()
	s.seams.hold = hold
	s.mu.Unlock()
	s.poke()
}

// ReadTabForTest runs the binder's read script in a tab and returns the
// nonces it found.
func ReadTabForTest(ctx context.Context, s *Service, target string) ([]string, error) {
	b, err := browserForTest(s)
	if err != nil {
		return nil, err
	}
	st, err := s.read(ctx, b, target)
	return st.Nonces, err
}

// PageCountForTest counts the window's page targets.
func PageCountForTest(ctx context.Context, s *Service) (int, error) {
	b, err := browserForTest(s)
	if err != nil {
		return 0, err
	}
	var res struct {
		TargetInfos []struct {
			Type string `json:"type"`
		} `json:"targetInfos"`
	}
	if err := b.Conn.Call(ctx, "", "Target.getTargets", nil, &res); err != nil {
		return 0, err
	}
	n := 0
	for _, t := range res.TargetInfos {
		if t.Type == "page" {
			n++
		}
	}
	return n, nil
}

// EvalForTest evaluates expr in a tab and returns its value as JSON.
func EvalForTest(ctx context.Context, s *Service, target, expr string) (string, error) {
	b, err := browserForTest(s)
	if err != nil {
		return "", err
	}
	session, detach, err := attach(ctx, b, target)
	if err != nil {
		return "", err
	}
	defer detach()
	var v any
	if err := evaluate(ctx, b, session, expr, &v); err != nil {
		return "", err
	}
	return fmt.Sprint(v), nil
}
