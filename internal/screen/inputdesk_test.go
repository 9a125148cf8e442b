package screen

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// TestDecideInputDesktop: every desktop Windows can put input on gets
// Hearth's answer. Only "Default" lets input through; Winlogon and an
// access-denied open (how a secure desktop answers a normal program) are
// the secure desktop, said in plain words; anything else is refused with
// its name or the raw error kept for the details.
func TestDecideInputDesktop(t *testing.T) {
	denied := syscall.Errno(5)
	cases := []struct {
		name   string
		probe  DesktopProbe
		secure bool
		words  string // "" = input allowed
	}{
		{"the person's desktop", DesktopProbe{Name: "Default"}, false, ""},
		{"case does not matter", DesktopProbe{Name: "default"}, false, ""},
		{"UAC prompt by name", DesktopProbe{Name: "Winlogon"}, true, "User Account Control prompt"},
		{"UAC prompt by refusal", DesktopProbe{OpenErr: denied, AccessDenied: true}, true, "Answer it yourself"},
		{"screen saver", DesktopProbe{Name: "Screen-saver"}, false, "screen saver"},
		{"another desktop", DesktopProbe{Name: "Sysinternals Desktop 1"}, false, `"Sysinternals Desktop 1"`},
		{"no name", DesktopProbe{}, false, "has no name"},
		{"other open failure", DesktopProbe{OpenErr: errors.New("not enough quota")}, false, "not enough quota"},
	}
	for _, c := range cases {
		err := DecideInputDesktop(c.probe)
		if c.words == "" {
			if err != nil {
				t.Errorf("%s: input refused: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: input allowed", c.name)
			continue
		}
		if errors.Is(err, ErrSecureDesktop) != c.secure || !strings.Contains(err.Error(), c.words) {
			t.Errorf("%s: %v (secure desktop: %v, want %v; want words %q)", c.name, err, errors.Is(err, ErrSecureDesktop), c.secure, c.words)
		}
	}
}
