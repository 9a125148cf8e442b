package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/instance"
	"github.com/hearth-dev/hearth/internal/tray"
	"github.com/hearth-dev/hearth/internal/update"
)

// handoff carries an update plan from the running Hearth (its update
// service asks for the hand-over) to the code after it has stopped.
type handoff struct {
	stop func()
	mu   sync.Mutex
	plan *update.Plan
}

func newHandoff(stop func()) *handoff { return &handoff{stop: stop} }

// request keeps p and stops Hearth; the caller of Wait then applies it.
func (h *handoff) request(p update.Plan) {
	h.mu.Lock()
	h.plan = &p
	h.mu.Unlock()
	h.stop()
}

func (h *handoff) pending() (update.Plan, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.plan == nil {
		return update.Plan{}, false
	}
	return *h.plan, true
}

// apply hands over to the new version: this program's file is replaced
// and started again with the same arguments (update.Apply).
func (h *handoff) apply(p update.Plan, dataDir string, args []string, keep int, log *slog.Logger) update.Outcome {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		o := update.Outcome{From: p.From, To: p.To, Result: update.ResultRolledBack, Plain: "Hearth did not update: it could not find its own program file.", Detail: err.Error()}
		log.Error("update: find this program", "err", err)
		return o
	}
	return update.Apply(context.Background(), p, update.Handoff{
		Exe: exe, Args: args, Env: os.Environ(),
		DataDir: dataDir, ConfigPath: config.Path(dataDir), BackupKeep: keep, Log: log,
	})
}

// resumeUpdate finishes a hand-over the last run left unfinished (its
// watching Hearth was killed during the health wait), before this start
// opens the database: see update.Resume. restarted: this program was the
// unchecked new version, the previous one now runs in its place, and this
// one must exit.
func resumeUpdate(ctx context.Context, dataDir string, args []string, log *slog.Logger) (o update.Outcome, restarted, ok bool) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return update.Outcome{}, false, false
	}
	o, restarted, ok = update.Resume(ctx, update.Handoff{
		Exe: exe, Args: args, Env: os.Environ(), DataDir: dataDir, ConfigPath: config.Path(dataDir), Log: log,
	}, version)
	if ok {
		log.Warn("update: an unfinished hand-over was rolled back", "to", o.To, "detail", o.Detail)
	}
	return o, restarted, ok
}

// reportHandedOver tells the terminal a serve ran in how to reach and stop
// the Hearth that now runs in its place, in the background: its address,
// a sign-in link (asked of it as a second serve asks, only when stdout is
// a terminal), and how to stop it.
func reportHandedOver(ctx context.Context, dataDir string, stdout io.Writer) {
	info, err := instance.ReadInfo(dataDir)
	if err != nil {
		fmt.Fprintln(stdout, "Hearth now runs in the background; run hearth-tray serve again to see its address and sign-in link.")
		return
	}
	fmt.Fprintf(stdout, "Hearth %s now runs in the background (process %d) at %s; this window no longer controls it.\n", update.Display(info.Version), info.PID, info.MCPURL)
	if f, ok := stdout.(*os.File); ok && isTerminal(f) {
		actx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		if login, err := tray.AskLogin(actx, dataDir); err == nil {
			fmt.Fprintf(stdout, "Sign in again: control panel at %s\n", login)
		} else {
			fmt.Fprintf(stdout, "Control panel at %s (for a sign-in link, run hearth-tray serve again)\n", info.PanelURL)
		}
	} else {
		fmt.Fprintf(stdout, "Control panel at %s (for a sign-in link, run hearth-tray serve in a terminal window)\n", info.PanelURL)
	}
	fmt.Fprintln(stdout, stopSentence(info.PID))
}

// stopSentence is how to stop the Hearth running in the background as pid.
func stopSentence(pid int) string {
	if runtime.GOOS == "windows" {
		return fmt.Sprintf("To stop it: end hearth-tray.exe (process %d) in Task Manager's Details tab.", pid)
	}
	return fmt.Sprintf("To stop it: kill %d (it stops cleanly, as Ctrl-C would).", pid)
}
