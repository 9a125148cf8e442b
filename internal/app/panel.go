package app

import (
	"context"
	"net/http"
	"runtime"

	"github.com/hearth-dev/hearth/web"
	"github.com/hearth-dev/hearth/web/session"
	"github.com/hearth-dev/hearth/web/status"
)

// PanelDeps are the parts the control panel drives (tests build a panel
// of their own over them, with a clock they move).
func (a *App) PanelDeps() web.Deps {
	d := web.Deps{
		Gov: a.Gov, Operator: a.Operator, Ledger: a.Ledger, DB: a.DB,
		Jobs: a.Jobs, Dispatcher: a.Dispatcher, Runs: a.Runs, Recipes: a.Recipes,
		MCPURL: a.MCPURL, Log: a.Log,
		Tunnel: a.Tunnel, StartTunnel: a.StartTunnel, StopTunnel: a.StopTunnel,
		LastBackup: a.lastBackupLine,
		AnyAccount: !a.Config.LoopbackSameUser,
		Storage: func(ctx context.Context) (int64, int64, error) {
			u, err := a.StorageUsage(ctx)
			return u.UsedBytes, u.BudgetBytes, err
		},
		Wake: a.Wake, OpenChatGPT: a.OpenChatGPT, SetWakeArmed: a.SetWakeArmed, SetWakeTimings: a.SetWakeTimings,
		DataDir: a.DataDir,
		FS:      a.FS, ReceiptDays: a.Config.ReceiptRetentionDays, Undo: a.undoStatus,
		PortMoves: func() []status.PortMove {
			var out []status.PortMove
			for _, m := range a.AddrMoves() {
				out = append(out, status.PortMove{Sentence: m.Sentence(), Key: m.Key, Configured: m.Configured, Bound: m.Bound, Cause: m.Cause})
			}
			return out
		},
	}
	if a.Updates != nil {
		d.Updates, d.InstallUpdate, d.UpdateBusy = a.Updates, a.InstallUpdate, a.UpdateBusy
	}
	if runtime.GOOS == "windows" {
		// The logon task exists only on Windows; elsewhere the Setup page
		// says where start-at-logon is available instead.
		d.StartAtLogon = a.Logon.Enabled
	}
	return d
}

// panelHandler is the control panel's router: loopback Host only, a
// session from a one-time login URL, CSRF-checked POSTs (see package web).
func (a *App) panelHandler() http.Handler { return a.panel.Handler() }

// NewLoginURL mints a one-time control panel login URL (valid once, for
// 10 minutes) on the listening panel address: serve prints one at start,
// and the tray mints a fresh one for each "Open control panel".
func (a *App) NewLoginURL() (string, error) {
	return a.panel.LoginURLFrom(a.PanelURL(), "", session.OriginServe)
}

// ControlLoginURL is NewLoginURL for a login another program asks for
// through the tray control endpoint: its session is journaled as such
// with every safety setting it lowers.
func (a *App) ControlLoginURL() (string, error) {
	return a.panel.LoginURLFrom(a.PanelURL(), "", session.OriginControl)
}

// NewLoginURLTo is NewLoginURL for a login that lands on next, a control
// panel path such as "/permits" (the tray's "Pending permits"); a next
// that is not a panel path is an error naming it.
func (a *App) NewLoginURLTo(next string) (string, error) {
	return a.panel.NewLoginURLTo(a.PanelURL(), next)
}

// undoStatus is the Status page's line about undoing ChatGPT's changes.
func (a *App) undoStatus(ctx context.Context) (status.Undo, error) {
	b, err := a.FS.StoredBytes(ctx)
	if err != nil {
		return status.Undo{}, err
	}
	oldest, any, err := a.FS.UndoReach(ctx)
	if err != nil {
		return status.Undo{}, err
	}
	return status.Undo{Known: true, Bytes: b, Budget: a.Config.StorageBudgetBytes, Oldest: oldest, Any: any,
		KeptDays: a.Config.ReceiptRetentionDays}, nil
}
