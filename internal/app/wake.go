package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/wake"
)

// newWake builds the route probe, the ChatGPT window, the binder and the
// waker from the wake.* config (disarmed unless the operator armed it).
func newWake(db *store.DB, led *ledger.Ledger, log *slog.Logger, dataDir string, w config.Wake) (*wake.Service, error) {
	return wake.New(wake.Options{
		DB: db, Journal: led, Log: log, DataDir: dataDir,
		Undelivered: func(ctx context.Context, route string) (int, time.Time, error) {
			return dispatch.Undelivered(ctx, db, route)
		},
		Armed: w.Armed, Settings: wakeSettings(w),
	})
}

func wakeSettings(w config.Wake) wake.Settings {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	return wake.Settings{
		BrowserPath: w.BrowserPath, Debounce: ms(w.DebounceMS), Quiet: ms(w.QuietMS),
		Cooldown: ms(w.CooldownMS), MaxAttempts: w.MaxAttempts, ProbeTTL: ms(w.ProbeTTLMS),
	}
}

// SetWakeArmed arms or disarms automatic wake for the operator (the
// control panel): journaled, live at once, and kept in config.json.
func (a *App) SetWakeArmed(ctx context.Context, operator string, armed bool) error {
	if err := a.editWakeConfig(func(w *config.Wake) { w.Armed = armed }); err != nil {
		return err
	}
	return a.Wake.SetArmed(ctx, operator, armed)
}

// SetWakeTimings sets the wake timing settings for the operator (the
// control panel): validated, journaled, live at once, kept in config.json.
func (a *App) SetWakeTimings(ctx context.Context, operator string, debounceMS, quietMS, cooldownMS, maxAttempts int) error {
	var next config.Wake
	err := a.editWakeConfig(func(w *config.Wake) {
		w.DebounceMS, w.QuietMS, w.CooldownMS, w.MaxAttempts = debounceMS, quietMS, cooldownMS, maxAttempts
		next = *w
	})
	if err != nil {
		return err
	}
	return a.Wake.SetSettings(ctx, operator, wakeSettings(next))
}

// editWakeConfig applies edit to the wake block of config.json (re-read,
// so that other keys written since start are kept) after validating it.
func (a *App) editWakeConfig(edit func(*config.Wake)) error {
	err := a.cfgFile.edit(func(c *config.Config) error {
		edit(&c.Wake)
		return c.Wake.Validate()
	})
	if err != nil {
		return fmt.Errorf("save wake settings: %w", err)
	}
	return nil
}

// OpenChatGPT opens Hearth's ChatGPT window (the tray's and the panel's
// "Open ChatGPT").
func (a *App) OpenChatGPT(ctx context.Context) error { return a.Wake.Open(ctx) }

// wakeStatus is what host_info discloses about wake.
func (a *App) wakeStatus() map[string]any {
	w := a.Wake.Window()
	return map[string]any{"armed": a.Wake.Armed(), "window_open": w.Open, "bound_conversations": len(a.Wake.Bindings())}
}

// wakeDisclosure is the tool descriptions' sentence about wake.
func (a *App) wakeDisclosure() string {
	const probe = " A pending answer's route_probe nonce: repeat it once in your reply."
	if a.Wake.Armed() {
		return " Wake: ARMED: a quiet bound ChatGPT conversation whose detached results wait is prompted to call machine.host_info." + probe
	}
	return " Wake: off: call again to collect detached results." + probe
}
