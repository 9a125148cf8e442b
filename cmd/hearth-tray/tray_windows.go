package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/instance"
	"github.com/hearth-dev/hearth/internal/tray"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// Tray timings.
const (
	// openRunningWait: how long a second start keeps asking a first one
	// that may still be starting to open its panel.
	openRunningWait = 15 * time.Second
	// endSessionWait bounds the shutdown at logoff: Windows ends a process
	// that takes much longer to answer WM_ENDSESSION.
	endSessionWait = 4 * time.Second
	trayLogMax     = 1 << 20
)

// runTray is the no-argument entry point on Windows: Hearth with its
// notification-area icon. Errors are shown in a message box unless the
// logon task started it (then only the tray log has them).
func runTray(ctx context.Context, stdout, stderr io.Writer) error {
	quiet := os.Getenv(startedByEnv) == "ensure"
	// Not passed on to what Hearth runs.
	os.Unsetenv(startedByEnv)
	err := trayMain(ctx, quiet)
	var damaged *app.DamagedError
	if errors.As(err, &damaged) && !quiet {
		// A damaged database gets its own dialog: what happened, the
		// newest verified backup, and Restore, after which Hearth starts.
		// (A logon-task start says nothing; the next start by the user
		// asks.)
		return restoreAndStart(ctx, damaged, func() error { return trayMain(ctx, quiet) })
	}
	if err != nil && !quiet {
		messageBox("Hearth could not start", err.Error())
	}
	return err
}

// restoreAndStart offers to restore the damaged database (askRestore)
// and, once restored, starts Hearth again with start.
func restoreAndStart(ctx context.Context, damaged *app.DamagedError, start func() error) error {
	dataDir, err := config.DataDir()
	if err != nil {
		return err
	}
	restored, err := offerRestore(ctx, dataDir, damaged, askRestore)
	if err != nil {
		messageBox("Hearth could not restore its database", err.Error())
		return err
	}
	if !restored {
		return damaged
	}
	if err := start(); err != nil {
		messageBox("Hearth could not start", err.Error())
		return err
	}
	return nil
}

func trayMain(ctx context.Context, quiet bool) error {
	dataDir, err := config.DataDir()
	if err != nil {
		return err
	}
	logf, err := openTrayLog(dataDir)
	if err != nil {
		return err
	}
	defer logf.Close()
	log := slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// fyne.io/systray reports its failures through the standard logger.
	slog.SetDefault(log)

	// A hand-over the last run left unfinished is finished first, before
	// the database opens; when this program was the unchecked new
	// version, the previous one now runs in its place.
	if o, restarted, ok := resumeUpdate(ctx, dataDir, os.Args[1:], log); ok && restarted {
		log.Info("update", "result", o.Result, "plain", o.Plain)
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this program: %w", err)
	}
	cfgPath := config.Path(dataDir)
	_, statErr := os.Stat(cfgPath)
	firstRun := errors.Is(statErr, fs.ErrNotExist)

	quitc := make(chan struct{})
	var quitOnce sync.Once
	quit := func() { quitOnce.Do(func() { close(quitc) }) }
	var (
		t   *tray.Tray
		ctl *tray.Endpoint
	)
	handoff := newHandoff(quit)
	// Lowerings Hearth makes from here on, while starting too (a mode
	// adopted from config.json), are announced by the notifications.
	started := time.Now()
	h, err := app.Start(ctx, app.Options{
		DataDir: dataDir, ConfigPath: cfgPath, Version: version, Log: log, Instance: true,
		UpdateURL: updateURL, UpdateKey: updateKey, Handoff: handoff.request,
		// The control endpoint is published before instance.json, so that
		// a second start that sees instance.json finds it too, and answers
		// while Hearth recovers the previous run's state.
		Listening: func(a *app.App) error {
			t = &tray.Tray{
				Hearth:    trayHearth(a, started),
				Autostart: tray.Autostart{Enabled: a.Logon.Enabled, Enable: a.Logon.Enable, Disable: a.Logon.Disable},
				Exe:       exe, Browse: tray.OpenURL, Quit: quit, Log: log,
			}
			ctl = &tray.Endpoint{Open: t.OpenPanel, Quit: quit, Login: a.ControlLoginURL, Log: log, AnyAccount: !a.Config.LoopbackSameUser}
			if err := ctl.Listen(dataDir); err != nil {
				return err
			}
			go func() {
				if err := ctl.Serve(); err != nil {
					log.Error("tray control endpoint", "err", err)
				}
			}()
			return nil
		},
	})
	if errors.Is(err, instance.ErrAlreadyRunning) {
		if quiet {
			return nil
		}
		return openRunning(ctx, dataDir)
	}
	if err != nil {
		if ctl != nil {
			ctl.Close()
		}
		return err
	}
	defer ctl.Close()
	log.Info("hearth started", "pid", os.Getpid(), "mcp", h.MCPURL(), "panel", h.PanelURL(), "first_run", firstRun)
	stopTunnelNotes := h.Tunnel.OnChange(func(tunnel.Status) { t.Poke() })
	if firstRun {
		// docs/DESIGN.md, "The panel": the first run opens the Setup page.
		if err := t.OpenPanelAt("/setup"); err != nil {
			log.Error("first run: open the control panel", "err", err)
		}
	}

	// Shutdown, in order, whatever asks for it (the menu's Quit, the
	// control endpoint, logoff, a signal, or Hearth ending by itself): the
	// icon goes first, then the control endpoint, the tray's refreshes,
	// its notifications and the tunnel's notes, then Hearth (Serve's own
	// order: tunnel, listeners, work, checkpoint), whose database and
	// instance lock are released last.
	trayCtx, stopTray := context.WithCancel(context.Background())
	defer stopTray()
	stopNotifications := startNotifications(trayCtx, t, log)
	stopIcon := make(chan struct{})
	done := make(chan struct{})
	var serveErr error
	go func() {
		defer close(done)
		select {
		case <-quitc:
		case <-ctx.Done():
		case <-h.Done():
		}
		log.Info("hearth stopping")
		close(stopIcon)
		if err := ctl.Close(); err != nil {
			log.Warn("close the tray control endpoint", "err", err)
		}
		stopTray()
		stopNotifications()
		stopTunnelNotes()
		serveErr = h.Stop()
		log.Info("hearth stopped", "err", serveErr)
	}()
	endSession := func() {
		quit()
		select {
		case <-done:
		case <-time.After(endSessionWait):
		}
	}
	if err := tray.RunIcon(trayCtx, t, stopIcon, endSession); err != nil {
		// No notification area (no interactive desktop): Hearth keeps
		// serving; ensure and the control endpoint still reach it.
		log.Warn("no tray icon; Hearth runs without it", "err", err)
		<-stopIcon
	}
	<-done
	if plan, ok := handoff.pending(); ok {
		// Stopped for an update: hand over to the new version (and come
		// back if it is not healthy), then exit.
		o := handoff.apply(plan, dataDir, os.Args[1:], h.Config.BackupKeep, log)
		log.Info("update", "result", o.Result, "plain", o.Plain, "detail", o.Detail)
	}
	return serveErr
}

// trayHearth is what the tray reads and drives of the running app, which
// started at started.
func trayHearth(a *app.App, started time.Time) tray.Hearth {
	return tray.Hearth{
		Status: a.Gov.Status, Permits: a.PendingPermits,
		Tunnel: a.Tunnel.Status, StartTunnel: a.StartTunnel, StopTunnel: a.StopTunnel,
		TunnelAutostart: func() bool { return a.Tunnel.Config().Autostart },
		EStop:           a.Operator.EStop, OpenChatGPT: a.OpenChatGPT, LoginURL: a.LoginURL,
		Lowered: a.Gov.Lowered, Started: started,
		Update: func() string {
			if st := a.Updates.State(); st.Offer != nil && st.Offer.Blocked == "" {
				return st.Offer.Version
			}
			return ""
		},
	}
}

// openRunning is a second start's answer: ask the running tray to open its
// control panel. A headless serve has no tray to ask; then its panel's
// address is opened, whose page says how to sign in.
func openRunning(ctx context.Context, dataDir string) error {
	err := tray.AskWait(ctx, dataDir, tray.ReqOpen, openRunningWait)
	if !errors.Is(err, tray.ErrNoTray) {
		return err
	}
	info, ierr := instance.ReadInfo(dataDir)
	if ierr != nil {
		return fmt.Errorf("Hearth is already running but cannot be reached: %w", err)
	}
	return tray.OpenURL(info.PanelURL)
}

// openTrayLog opens <data>/logs/tray.log for appending, first moving a log
// over trayLogMax aside to tray.log.1.
func openTrayLog(dataDir string) (*os.File, error) {
	dir := filepath.Join(dataDir, "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	path := filepath.Join(dir, "tray.log")
	if fi, err := os.Stat(path); err == nil && fi.Size() > trayLogMax {
		os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open tray log: %w", err)
	}
	return f, nil
}

// messageBox shows an error to the user at the screen: a GUI program that
// fails silently looks like a double-click that did nothing.
func messageBox(title, text string) {
	t, err := windows.UTF16PtrFromString(title)
	if err != nil {
		return
	}
	m, err := windows.UTF16PtrFromString(text)
	if err != nil {
		return
	}
	windows.MessageBox(0, m, t, windows.MB_OK|windows.MB_ICONERROR)
}
