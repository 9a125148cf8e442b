package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/hearth-dev/hearth/internal/config"
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
