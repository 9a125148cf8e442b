package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hearth-dev/hearth/internal/httpbound"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// This file holds serving: every part started in order, the two servers,
// and the stop in reverse order (Open builds what it serves).

// Serve recovers the previous run's state, starts every part in order and
// serves until ctx is cancelled (or a listener fails); then it stops the
// parts in the reverse order (the tunnel first, so that no remote request
// arrives while the local servers drain; the dispatcher and the governor
// last) and signs a last checkpoint.
func (a *App) Serve(ctx context.Context) error {
	// A shutdown asked for while Hearth is still starting (Ctrl-C right
	// after the listening line) is a clean exit: each recovery step is
	// transactional, and the next start repeats what was cut short.
	startup := func(err error) error {
		if err != nil && ctx.Err() != nil {
			a.Log.Info("shut down during start-up", "err", err)
			return nil
		}
		return err
	}
	if err := a.Gov.Recover(ctx); err != nil {
		return startup(err)
	}
	if _, err := a.FS.Recover(ctx); err != nil {
		return startup(fmt.Errorf("recover fs receipts: %w", err))
	}
	// Sign what the last run (or recovery) journaled, so ledger verify
	// passes from the first moment, even after a crash; an unchanged
	// ledger keeps its checkpoint.
	if _, err := a.Ledger.Checkpoint(ctx); err != nil {
		return startup(fmt.Errorf("sign the start-up ledger checkpoint: %w", err))
	}
	// Each started part pushes its stop; stopAll runs them newest first.
	var stops []func()
	stopAll := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if err := a.Dispatcher.Start(ctx); err != nil {
		stopAll()
		return startup(err)
	}
	stops = append(stops, a.Dispatcher.Stop)
	// Permit decisions the last run committed but did not carry out (it
	// stopped in between) are carried out now: approved work is released,
	// refused work settled.
	if err := a.Operator.Recover(ctx); err != nil {
		stopAll()
		return startup(err)
	}
	a.Operator.Start(ctx) // the permit expiry loop
	stops = append(stops, a.Operator.Stop)
	// Sessions the last run left open are recorded closed; those of this
	// run are closed, their trees killed, when it stops.
	if err := a.Sessions.Start(ctx); err != nil {
		stopAll()
		return startup(err)
	}
	stops = append(stops, a.Sessions.Stop)
	a.Runs.Start(ctx)
	stops = append(stops, a.Runs.Stop)
	if err := a.Wake.Start(ctx); err != nil {
		stopAll()
		return startup(err)
	}
	stops = append(stops, a.Wake.Stop)
	// What became of the last update goes into the ledger before anything
	// new does; a failure to record it is logged, not fatal.
	if err := a.recordUpdateOutcome(ctx); err != nil {
		a.Log.Warn("update: record the last update's outcome", "err", err)
	}
	// The periodic work: checkpoints, retention, backups, storage budget.
	loopCtx, stopLoops := context.WithCancel(ctx)
	loops := []<-chan struct{}{a.startCheckpoints(loopCtx), a.startRetention(loopCtx), a.startBackups(loopCtx), a.startBudget(loopCtx), a.startUpdates(loopCtx)}
	stops = append(stops, func() {
		stopLoops()
		for _, done := range loops {
			<-done
		}
	})
	// Each listener bounds time and memory per request and in total
	// (internal/httpbound); the MCP endpoint's refusals are JSON-RPC.
	mcpSrv := httpbound.New(httpbound.MCP(), mcpserver.Reject).Server(countInFlight(&a.mcpInFlight, a.MCP.Handler()))
	mcpSrv.ConnContext = mcpConnContext
	panelSrv := httpbound.New(httpbound.Panel(), nil).Server(a.panelHandler())
	errc := make(chan error, 2)
	go func() { errc <- mcpSrv.Serve(a.mcpLn) }()
	go func() { errc <- panelSrv.Serve(a.panelLn) }()
	var shutErr error
	stops = append(stops, func() { shutErr = shutdown(ctx, mcpSrv, panelSrv) })
	close(a.ready)
	a.confirmUpdate()
	a.startTunnel(ctx)
	stops = append(stops, a.Tunnel.Stop)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	stopAll()
	a.UI.Close()
	a.Screen.Close()
	// Sign a checkpoint of everything journaled, so evidence verifies
	// offline up to the last entry of this run.
	err := shutErr
	if _, cerr := a.Ledger.Checkpoint(context.WithoutCancel(ctx)); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	return errors.Join(serveErr, err)
}

// shutdown stops the servers accepting and gives in-flight requests a
// moment (calls answer within the inline budget or go pending). A
// connection that never sent a request would hold Shutdown for five
// seconds, so after the grace period the servers are closed outright.
func shutdown(ctx context.Context, servers ...*http.Server) error {
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	var err error
	for _, srv := range servers {
		if serr := srv.Shutdown(shut); errors.Is(serr, context.DeadlineExceeded) {
			err = errors.Join(err, srv.Close())
		} else {
			err = errors.Join(err, serr)
		}
	}
	return err
}
