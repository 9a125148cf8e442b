package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hearth-dev/hearth/internal/update"
)

// newUpdater builds the update service from the config and what the
// release scripts built in (Options.UpdateURL, Options.UpdateKey):
// update.url overrides the built-in address.
func (a *App) newUpdater(opts Options) *update.Service {
	u := a.Config.Update
	url := opts.UpdateURL
	if u.URL != "" {
		url = u.URL
	}
	handoff := opts.Handoff
	if handoff != nil {
		// The browser stays signed in across the hand-over: the next
		// Hearth (the new version, or this one again after a rollback)
		// takes the panel's sessions at start (restoreSessions).
		handoff = func(p update.Plan) {
			if err := a.panel.SaveSessions(handedSessions(a.DataDir)); err != nil {
				a.Log.Warn("update: the panel's sign-in will not survive the restart", "err", err)
			}
			opts.Handoff(p)
		}
	}
	return update.New(update.Options{
		Version: opts.Version, URL: url, Key: opts.UpdateKey,
		Check: u.Check, Auto: u.Auto, DataDir: a.DataDir,
		Quiet: a.quietMoment, Handoff: handoff, Log: a.Log,
		BeforeQuiet: func(ctx context.Context, from, to string, asked bool) error {
			rec := map[string]string{"auto": "true", "from": from, "to": to}
			if asked {
				rec = map[string]string{"when": "started when done", "from": from, "to": to}
			}
			_, err := a.Ledger.Append(ctx, KindUpdateInstall, rec)
			return err
		},
	})
}

// handedSessions is where a Hearth handing over to another keeps the
// panel's sessions for it.
func handedSessions(dataDir string) string {
	return filepath.Join(update.Dir(dataDir), "sessions.json")
}

// restoreSessions takes the panel sessions a hand-over left (see
// newUpdater), once.
func (a *App) restoreSessions() {
	if n, err := a.panel.RestoreSessions(handedSessions(a.DataDir)); err != nil {
		a.Log.Warn("update: the panel's sessions handed over", "err", err)
	} else if n > 0 {
		a.Log.Info("update: the panel's sign-in survived the hand-over", "sessions", n)
	}
}

// startUpdates checks for updates at start and once a day until ctx ends.
func (a *App) startUpdates(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Updates.Run(ctx)
	}()
	return done
}

// quietMoment is when update.auto may restart Hearth: no MCP request in
// flight, no future queued, running or waiting, no open session and no
// permit waiting for the operator.
func (a *App) quietMoment() bool {
	if a.mcpInFlight.Load() != 0 || a.Sessions.Count() != 0 {
		return false
	}
	ctx := context.Background()
	pending, err := a.Operator.Permits(ctx, "pending")
	if err != nil || len(pending) != 0 {
		return false
	}
	futures, err := a.Dispatcher.ListAllFutures(ctx, 500)
	if err != nil {
		return false
	}
	for _, f := range futures {
		switch f.State {
		case "queued", "running", "waiting", "permit", "held":
			return false
		}
	}
	return true
}

// countInFlight counts the MCP requests being answered, for quietMoment.
func countInFlight(n *atomic.Int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		n.Add(1)
		defer n.Add(-1)
		h.ServeHTTP(w, r)
	})
}

// KindUpdateInstall is the ledger entry of an operator's Update click,
// of an automatic update (update.auto; field auto "true") as it starts,
// or of the start, at the quiet moment, of the update the operator asked
// for when the work is done (field when "started when done"; the click's
// entry has when "when done" and names the same version).
const KindUpdateInstall = "update_install"

// KindUpdateOutcome is the ledger entry of what became of an update
// (updated, or rolled back to the previous version), written by the
// Hearth that runs next.
const KindUpdateOutcome = "update_outcome"

// recordUpdateOutcome writes the last update's outcome into the ledger
// once. The outcome is marked recorded after the entry is appended, so a
// crash between the two records it twice rather than never.
func (a *App) recordUpdateOutcome(ctx context.Context) error {
	o, ok := a.Updates.Unrecorded()
	if !ok {
		return nil
	}
	rec := map[string]string{"from": o.From, "to": o.To, "result": o.Result, "when": o.When.UTC().Format(time.RFC3339), "detail": o.Detail}
	if _, err := a.Ledger.Append(ctx, KindUpdateOutcome, rec); err != nil {
		return fmt.Errorf("append to the ledger: %w", err)
	}
	return a.Updates.RecordedOutcome()
}

// InstallUpdate starts installing the offered update for operator: it is
// journaled under their name first, like every operator action. whenDone
// (Update when they are done) waits for the quiet moment update.auto
// waits for; otherwise (Update now) the work in progress is stopped, and
// the entry says what it stops. Queued work stays in the database and
// runs after the update either way.
func (a *App) InstallUpdate(ctx context.Context, operator string, whenDone bool) error {
	st := a.Updates.State()
	if st.Offer == nil {
		return errors.New("no update is available")
	}
	if !st.CanInstall {
		return errors.New("this update cannot be installed now")
	}
	rec := map[string]string{"operator": operator, "from": st.Version, "to": st.Offer.Version}
	if whenDone {
		rec["when"] = "when done"
	} else if busy := a.UpdateBusy(ctx); busy != "" {
		rec["stops"] = busy
	}
	if _, err := a.Ledger.Append(ctx, KindUpdateInstall, rec); err != nil {
		return fmt.Errorf("record the update in the ledger: %w", err)
	}
	if whenDone {
		return a.Updates.InstallWhenDone()
	}
	return a.Updates.Install(ctx)
}

// UpdateBusy says, for the Update button, what an update now would stop:
// "2 tasks are running and 1 approval is waiting"; "" at a quiet moment.
// Tasks are the calls being answered, the detached and scheduled work
// queued, running or waiting, and the open sessions.
func (a *App) UpdateBusy(ctx context.Context) string {
	tasks := int(a.mcpInFlight.Load()) + a.Sessions.Count()
	if futures, err := a.Dispatcher.ListAllFutures(ctx, 500); err == nil {
		for _, f := range futures {
			switch f.State {
			case "queued", "running", "waiting", "permit", "held":
				tasks++
			}
		}
	}
	approvals := 0
	if pending, err := a.Operator.Permits(ctx, "pending"); err == nil {
		approvals = len(pending)
	}
	return busyWords(tasks, approvals)
}

// busyWords is UpdateBusy's sentence for the counts.
func busyWords(tasks, approvals int) string {
	var parts []string
	switch {
	case tasks == 1:
		parts = append(parts, "1 task is running")
	case tasks > 1:
		parts = append(parts, fmt.Sprintf("%d tasks are running", tasks))
	}
	switch {
	case approvals == 1:
		parts = append(parts, "1 approval is waiting")
	case approvals > 1:
		parts = append(parts, fmt.Sprintf("%d approvals are waiting", approvals))
	}
	return strings.Join(parts, " and ")
}

// confirmUpdate ends a hand-over to this version once it serves (the
// watching Hearth may have been killed before it could): see
// update.Confirm.
func (a *App) confirmUpdate() {
	if a.Updates == nil {
		return
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return
	}
	update.Confirm(a.DataDir, exe, a.Updates.State().Version)
}
