package desktop

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/screen"
)

// TestWindowUnderUACPromptIsBlocked: while Windows shows its secure
// desktop, ui.window answers blocked (secure_desktop) with the reason in
// plain words and touches no window: it does not even look for one.
func TestWindowUnderUACPromptIsBlocked(t *testing.T) {
	for _, probe := range []screen.DesktopProbe{{Name: "Winlogon"}, {OpenErr: errors.New("Access is denied."), AccessDenied: true}} {
		s := &Service{
			inputDesktop: func() error { return screen.DecideInputDesktop(probe) },
			display: func() (screen.Display, error) {
				t.Fatal("ui.window looked at the windows under a UAC prompt")
				return nil, nil
			},
		}
		_, err := s.Window(context.Background(), WindowInput{HWND: 42, Action: "focus"})
		var pe *primitive.Error
		if !errors.As(err, &pe) || pe.State != "blocked" || pe.Code != "secure_desktop" ||
			!strings.Contains(err.Error(), "User Account Control") || !strings.Contains(err.Error(), "no window was changed") {
			t.Fatalf("%+v: %v", probe, err)
		}
	}
}
