package tray

import "github.com/hearth-dev/hearth/internal/app"

// hearthOf is the Hearth of an in-process app, as cmd/hearth-tray builds
// it for the running one.
func hearthOf(a *app.App) Hearth {
	return Hearth{
		Status: a.Gov.Status, Permits: a.PendingPermits,
		Tunnel: a.Tunnel.Status, StartTunnel: a.StartTunnel, StopTunnel: a.StopTunnel,
		EStop: a.Operator.EStop, OpenChatGPT: a.OpenChatGPT, LoginURL: a.LoginURL,
		Lowered: a.Gov.Lowered,
	}
}
