package app

import (
	"context"

	"github.com/hearth-dev/hearth/internal/govern"
)

// PendingPermits lists the permits waiting for the operator (the tray's
// "Pending permits" entry and its notifications).
func (a *App) PendingPermits(ctx context.Context) ([]govern.Permit, error) {
	return a.Operator.Permits(ctx, "pending")
}

// LoginURL mints a one-time control panel login URL that lands on page, a
// panel path such as "/permits"; "" is NewLoginURL's plain login.
func (a *App) LoginURL(page string) (string, error) {
	if page == "" {
		return a.NewLoginURL()
	}
	return a.NewLoginURLTo(page)
}
