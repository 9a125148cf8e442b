package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/secrets"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// tunnelServe remembers Serve's context, under which the tunnel runs
// whoever starts it: autostart, the control panel or the tray.
type tunnelServe struct {
	mu  sync.Mutex
	ctx context.Context
}

// newTunnel builds the tunnel supervisor over the secrets store (Windows
// Credential Manager; a 0600 development file elsewhere). Nothing starts
// until Serve. A tunnel-client pinned while Hearth runs is denied to the
// fs tool from that moment (deniedPaths covers the one pinned at start):
// the model cannot get a changed file run, but it could stop the tunnel by
// rewriting it into client_changed. A pin replaced by another stays denied
// until Hearth restarts.
func newTunnel(cfg config.Config, opts Options, led *ledger.Ledger, log *slog.Logger, roots fsops.Roots) (*tunnel.Supervisor, error) {
	store, err := secrets.Open(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("open secrets store: %w", err)
	}
	denyPinned := func(path string) {
		if err := roots.Deny(path); err != nil {
			log.Error("secure mcp tunnel: deny the pinned tunnel-client to the fs tool", "path", path, "err", err)
		}
	}
	return tunnel.New(tunnel.Options{
		Config: cfg.Tunnel, ConfigPath: opts.ConfigPath, DataDir: opts.DataDir,
		Secrets: store, Journal: led, Log: log, Roots: cfg.Roots,
		OnPinned: denyPinned, ProgramDir: opts.TunnelProgramDir,
	}), nil
}

// startTunnel is Serve's tunnel step, once the MCP endpoint listens:
// start tunnel-client when tunnel.autostart is on, else only report
// whether it could run (not_configured says what is missing). A tunnel
// set up before pinning existed (a tunnel ID and a key, nothing pinned)
// first gets the tunnel-client beside hearth-tray pinned, and only that
// one (tunnel.AutoPin), so that it keeps starting unattended. A pin of
// the tunnel-client beside an older copy of hearth-tray (a new version
// unpacked into a new folder) moves to the one beside this hearth-tray
// (tunnel.PreferBesideExe), unless this folder lies in an fs root: then
// the operator trusts it on the Setup page. tunnel-client's profile follows the MCP endpoint's real address
// (tunnel.Supervisor.SetMCPURL).
func (a *App) startTunnel(ctx context.Context) {
	a.tunnelServe.mu.Lock()
	a.tunnelServe.ctx = ctx
	a.tunnelServe.mu.Unlock()
	// The address the endpoint really listens on: a profile made for
	// another one (or another tunnel ID) is made again before tunnel-client
	// starts.
	a.Tunnel.SetMCPURL(a.MCPURL())
	if pin, ok, err := a.Tunnel.AutoPin(); err != nil {
		a.Log.Warn("secure mcp tunnel: pin the tunnel-client beside hearth-tray", "err", err)
	} else if ok {
		a.Log.Info("secure mcp tunnel: pinned the tunnel-client beside hearth-tray (set up before pinning existed)", "path", pin.Path, "sha256", pin.SHA256)
	}
	if from, ok, err := a.Tunnel.PreferBesideExe(); err != nil {
		a.Log.Warn("secure mcp tunnel: pin the tunnel-client beside this hearth-tray", "err", err)
	} else if ok {
		a.Log.Info("secure mcp tunnel: runs the tunnel-client beside this hearth-tray now, not the one beside an older copy", "was", from, "now", a.Tunnel.Config().ClientPath)
	}
	if !a.Tunnel.Config().Autostart {
		a.Tunnel.Check("not started: tunnel.autostart is off (start it from the control panel)")
		return
	}
	if err := a.Tunnel.Start(ctx); err != nil {
		a.Log.Warn("secure mcp tunnel not started", "err", err)
	}
}

// StartTunnel starts tunnel-client under Serve's context, so that it runs
// until Hearth shuts down or StopTunnel (the control panel's and the
// tray's "Start tunnel"; a request's context would end it at once).
func (a *App) StartTunnel() error {
	a.tunnelServe.mu.Lock()
	ctx := a.tunnelServe.ctx
	a.tunnelServe.mu.Unlock()
	if ctx == nil || ctx.Err() != nil {
		return errors.New("start tunnel: Hearth is not serving")
	}
	return a.Tunnel.Start(ctx)
}

// StopTunnel stops tunnel-client and waits for it.
func (a *App) StopTunnel() { a.Tunnel.Stop() }

// tunnelStatus is what host_info discloses about the tunnel: its state and
// Hearth's reason, never tunnel-client's own output.
func (a *App) tunnelStatus() map[string]any {
	st := a.Tunnel.Status()
	return map[string]any{"state": string(st.State), "reason": st.Reason}
}
