//go:build !windows

package wake

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestRouteProbeReusedUntilItExpires(t *testing.T) {
	set := fastSettings()
	set.ProbeTTL = time.Second
	r := newRig(t, t.TempDir(), true, set, nil)
	n1, exp, ok := r.svc.RouteProbe("r:p1")
	if !ok || !nonceRE.MatchString(n1) || time.Until(exp) > time.Second {
		t.Fatalf("probe %q %v %v", n1, exp, ok)
	}
	if n, _, _ := r.svc.RouteProbe("r:p1"); n != n1 {
		t.Fatal("a live probe was not reused")
	}
	if n, _, _ := r.svc.RouteProbe("r:p2"); n == n1 {
		t.Fatal("two conversations share a nonce")
	}
	if r.svc.liveProbes()[n1] != "r:p1" {
		t.Fatal("the probe is not live")
	}
	waitFor(t, "the probe to expire", func() bool { return r.svc.liveProbes()[n1] == "" })
	if n, _, _ := r.svc.RouteProbe("r:p1"); n == n1 || n == "" {
		t.Fatalf("after expiry got %q", n)
	}
	if _, _, ok := r.svc.RouteProbe(""); ok {
		t.Fatal("a probe for no route")
	}
}

// TestRouteProbeOnlyWhenWakeCanUseIt: a probe asks the model to repeat a
// code, so none is given while automatic wake is off and Hearth's ChatGPT
// window is neither open nor opening.
func TestRouteProbeOnlyWhenWakeCanUseIt(t *testing.T) {
	r := newRig(t, t.TempDir(), false, fastSettings(), nil)
	if n, _, ok := r.svc.RouteProbe("r:off"); ok || n != "" {
		t.Fatalf("disarmed, no window: probe %q", n)
	}
	if err := r.svc.SetArmed(context.Background(), "test", true); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := r.svc.RouteProbe("r:off"); !ok {
		t.Fatal("armed: no probe")
	}
	if err := r.svc.SetArmed(context.Background(), "test", false); err != nil {
		t.Fatal(err)
	}
	if n, _, ok := r.svc.RouteProbe("r:off"); ok || n != "" {
		t.Fatalf("disarmed again: probe %q", n)
	}
}

func TestAllowList(t *testing.T) {
	s := &Service{}
	cases := []struct {
		url, conv string
		ok        bool
	}{
		{"https://chatgpt.com/c/abc-123", "https://chatgpt.com/c/abc-123", true},
		{"https://chatgpt.com/g/g-xyz/c/abc?model=x#m", "https://chatgpt.com/c/abc", true},
		{"https://chat.openai.com/c/abc/", "https://chat.openai.com/c/abc", true},
		{"https://chatgpt.com/", "", true},
		{"http://chatgpt.com/c/abc", "", false},
		{"https://chatgpt.com.evil.example/c/abc", "", false},
		{"https://evil.example/c/abc", "", false},
		{"https://chatgpt.com:8443/c/abc", "", false},
		{"about:blank", "", false},
		{"chrome://newtab/", "", false},
	}
	for _, c := range cases {
		conv, ok := s.allowed(c.url)
		if ok != c.ok || conv != c.conv {
			t.Errorf("%s: got %q %v, want %q %v", c.url, conv, ok, c.conv, c.ok)
		}
	}
}

func TestSettingsValidateNamesTheKey(t *testing.T) {
	for key, edit := range map[string]func(*Settings){
		"wake.debounce_ms":  func(s *Settings) { s.Debounce = -time.Millisecond },
		"wake.quiet_ms":     func(s *Settings) { s.Quiet = 25 * time.Hour },
		"wake.cooldown_ms":  func(s *Settings) { s.Cooldown = -time.Second },
		"wake.probe_ttl_ms": func(s *Settings) { s.ProbeTTL = 0 },
		"wake.max_attempts": func(s *Settings) { s.MaxAttempts = 0 },
	} {
		s := DefaultSettings()
		edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v", key, err)
		}
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatal(err)
	}
}
