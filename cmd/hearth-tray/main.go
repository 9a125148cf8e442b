// Command hearth-tray is Hearth: the tray app on Windows and, with serve,
// the headless server everywhere. main only turns run's error into an exit
// code.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/demo"
	"github.com/hearth-dev/hearth/internal/instance"
	"github.com/hearth-dev/hearth/internal/peeruser"
	"github.com/hearth-dev/hearth/internal/screen"
	"github.com/hearth-dev/hearth/internal/selftest"
	"github.com/hearth-dev/hearth/internal/tray"
	"github.com/hearth-dev/hearth/internal/winconsole"
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

// updateURL and updateKey are the release manifest's address and the
// release verifier key (a golang.org/x/mod/sumdb/note key), stamped by the
// release scripts with -ldflags "-X main.updateURL=... -X main.updateKey=...".
// Empty in a development build; config update.url overrides the address.
var updateURL, updateKey string

func main() {
	// Before any window or coordinate is read: physical pixels on every
	// monitor, whatever its scale (the manifest says so too; this covers
	// a build without it). Should Windows refuse, the manifest's setting
	// stands, and there is no one to tell yet.
	_ = screen.SetPerMonitorDPIAware()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(os.Stderr, "hearth-tray:", err)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "hearth-tray:", err)
		os.Exit(1)
	}
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

const usage = `usage: hearth-tray [<command> [flags]]

With no command: Hearth with its tray icon (Windows; elsewhere as serve).

commands:
  serve     run Hearth headless (MCP endpoint and control panel)
  ensure [--home DIR]
            start Hearth detached unless it already runs (the logon task);
            --home: for data directory DIR
  install   install for this user (Windows): program, logon task,
            Start-menu shortcut; then start it
  uninstall [--purge]
            remove what install made and stop Hearth; --purge also
            deletes the data directory and the stored tunnel key
  mcp-config [--json]
            connector rows for tunnel-client, Claude Code, VS Code, any client
  ledger verify [--key VKEY] [BUNDLE | -]
            verify an evidence bundle (or one conversation's evidence
            read over MCP) offline, from a file or standard input (-),
            or the live database
  ledger export --out FILE
            write a signed evidence bundle
  safety status | reset --operator NAME
            show the e-stop; release it (interactive terminal only)
  backup [--list]
            make a verified backup of the database now (works while
            Hearth runs); --list shows the verified backups
  restore FILE
            replace the database with a backup (Hearth must not run);
            the replaced database is kept in backups/replaced-<time>
  demo [--out demo-report.json] [--keep]
            run the end-to-end demonstration on a temporary data directory
  selftest [--keep] [--report FILE]
            prove the Windows-only parts on this PC against disposable
            fixtures; exit code 1 when a check FAILs
  doctor    check config, data directory, database, ledger, running
            instance, ports, tunnel setup and autostart (read-only);
            exit code 1 when a check FAILs
  version   print the version
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if handled, err := demo.Child(args, stdout); handled {
		return err
	}
	if handled, err := selftest.Child(args, os.Stdin, stdout); handled {
		return err
	}
	if len(args) > 0 {
		// hearth-tray.exe is a GUI-subsystem program: a subcommand typed in
		// a terminal writes to that terminal; a double-click shows nothing.
		winconsole.AttachParent()
	}
	if len(args) == 0 {
		return runTray(ctx, stdout, stderr)
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "ensure":
		return ensureCmd(ctx, args[1:], stdout, stderr)
	case "install":
		return installCmd(ctx, args[1:], stdout, stderr)
	case "uninstall":
		return uninstallCmd(ctx, args[1:], stdout, stderr)
	case "mcp-config":
		return mcpConfigCmd(args[1:], stdout, stderr)
	case "ledger":
		return ledgerCmd(ctx, args[1:], stdout, stderr)
	case "safety":
		return safetyCmd(ctx, args[1:], os.Stdin, stdout, stderr)
	case "backup":
		return backupCmd(ctx, args[1:], stdout, stderr)
	case "restore":
		return restoreCmd(ctx, args[1:], stdout, stderr)
	case "demo":
		return demoCmd(ctx, args[1:], stdout, stderr)
	case "doctor":
		return doctorCmd(ctx, args[1:], stdout, stderr)
	case "selftest":
		return selftestCmd(ctx, args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "hearth-tray", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return usageError{fmt.Sprintf("unknown command %q\n%s", args[0], usage)}
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	mcpAddr := fs.String("mcp-addr", "", "MCP listen address (default from config, 127.0.0.1:3000)")
	panelAddr := fs.String("panel-addr", "", "control panel listen address (default from config, 127.0.0.1:3001)")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("serve: unexpected argument %q", fs.Arg(0))}
	}
	dataDir, err := config.DataDir()
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// A program the model runs that leaves its parent (double fork,
	// setsid) is re-parented to Hearth, so the control endpoint still
	// recognises it as Hearth's and refuses it a login (see tray.Endpoint).
	if err := peeruser.AdoptOrphans(); err != nil {
		log.Warn("serve: programs that leave their parent will not stay below Hearth", "err", err)
	}
	// A hand-over the last run left unfinished is finished first, before
	// the database opens.
	if o, restarted, ok := resumeUpdate(ctx, dataDir, os.Args[1:], log); ok {
		fmt.Fprintln(stdout, o.Plain)
		if restarted {
			reportHandedOver(ctx, dataDir, stdout)
			return nil
		}
	}
	// The control endpoint's Quit (uninstall) ends serving as Ctrl-C does.
	ctx, quit := context.WithCancel(ctx)
	defer quit()
	var ctl *tray.Endpoint
	handoff := newHandoff(quit)
	h, err := app.Start(ctx, app.Options{
		DataDir: dataDir, ConfigPath: config.Path(dataDir),
		MCPAddr: *mcpAddr, PanelAddr: *panelAddr, Version: version, Log: log, Instance: true,
		UpdateURL: updateURL, UpdateKey: updateKey, Handoff: handoff.request,
		// The control endpoint (published before instance.json, as the
		// tray's) lets a second serve print a working login URL, a second
		// tray start open the panel signed in, and uninstall stop it.
		Listening: func(a *app.App) error {
			ctl = serveControl(a, quit, log)
			if err := ctl.Listen(dataDir); err != nil {
				return err
			}
			go func() {
				if err := ctl.Serve(); err != nil {
					log.Error("control endpoint", "err", err)
				}
			}()
			return nil
		},
	})
	if errors.Is(err, instance.ErrAlreadyRunning) {
		// One Hearth per user and data directory: a second start points at
		// the first and succeeds.
		return reportRunning(ctx, dataDir, stdout)
	}
	if err != nil && ctl != nil {
		ctl.Close()
	}
	if err != nil {
		if ctx.Err() != nil {
			// Ctrl-C while starting is a clean exit: each recovery step is
			// transactional, and the next start repeats what was cut short.
			return nil
		}
		var damaged *app.DamagedError
		if errors.As(err, &damaged) {
			fmt.Fprintln(stderr, serveDamagedText(damaged))
			return errors.New("not started: the database is damaged")
		}
		return err
	}
	login, err := h.NewLoginURL()
	if err != nil {
		return errors.Join(err, h.Stop(), ctl.Close())
	}
	for _, m := range h.AddrMoves() {
		fmt.Fprintln(stdout, m.Sentence())
	}
	fmt.Fprintf(stdout, "Hearth listening at %s\n", h.MCPURL())
	// A one-time login URL (valid once, for 10 minutes): whoever opens it
	// first gets the control panel session.
	fmt.Fprintf(stdout, "Control panel at %s\n", login)
	err = h.Wait()
	err = errors.Join(err, ctl.Close())
	if plan, ok := handoff.pending(); ok {
		// Stopped for an update: hand over to the new version (and come
		// back if it is not healthy), then exit.
		o := handoff.apply(plan, dataDir, os.Args[1:], h.Config.BackupKeep, log)
		fmt.Fprintln(stdout, o.Plain)
		// This serve's context ended with the hand-over.
		reportHandedOver(context.Background(), dataDir, stdout)
	}
	return err
}

// serveControl is a headless Hearth's control endpoint: open mints a
// login URL and opens it in the browser, quit ends serving, login hands a
// login URL to a second serve (see tray.Endpoint).
func serveControl(a *app.App, quit func(), log *slog.Logger) *tray.Endpoint {
	return &tray.Endpoint{
		Open: func() error {
			u, err := a.ControlLoginURL()
			if err != nil {
				return err
			}
			return tray.OpenURL(u)
		},
		Quit: quit, Login: a.ControlLoginURL, Log: log, AnyAccount: !a.Config.LoopbackSameUser,
	}
}

// reportRunning is a second serve's answer: the running Hearth's MCP
// address and its control panel with a fresh one-time login URL. The login
// URL is asked for only when stdout is a terminal, a convenience (a
// redirected output gets the panel's address and how to sign in). It is
// not what keeps a login from the model: the running Hearth refuses
// /login to any program it started (see tray.Endpoint).
func reportRunning(ctx context.Context, dataDir string, stdout io.Writer) error {
	info, err := instance.ReadInfo(dataDir)
	if err != nil {
		fmt.Fprintln(stdout, "Hearth is already running for this data directory")
		return nil
	}
	fmt.Fprintf(stdout, "Hearth is already running (pid %d) at %s\n", info.PID, info.MCPURL)
	if f, ok := stdout.(*os.File); !ok || !isTerminal(f) {
		fmt.Fprintf(stdout, "Control panel at %s (for a sign-in link, run hearth-tray serve in a terminal window, or use the tray's Open control panel)\n", info.PanelURL)
		return nil
	}
	actx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	login, err := tray.AskLogin(actx, dataDir)
	if err != nil {
		fmt.Fprintf(stdout, "Control panel at %s (a sign-in link could not be had from the running Hearth: %v)\n", info.PanelURL, err)
		return nil
	}
	fmt.Fprintf(stdout, "Control panel at %s\n", login)
	return nil
}
