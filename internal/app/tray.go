package app

import (
	"context"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/web/session"
)

// What the tray asks of the app.

// PendingPermits lists the permits waiting for the operator (the tray's
// "Pending permits" entry and its notifications).
func (a *App) PendingPermits(ctx context.Context) ([]govern.Permit, error) {
	return a.Operator.Permits(ctx, "pending")
}

// LoginURL mints a one-time control panel login URL that lands on page, a
// panel path such as "/permits"; "" is NewLoginURL's plain login. It is
// the tray's: the session is journaled as opened from the tray.
func (a *App) LoginURL(page string) (string, error) {
	return a.panel.LoginURLFrom(a.PanelURL(), page, session.OriginTray)
}
