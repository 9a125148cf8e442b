package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	return update.New(update.Options{
		Version: opts.Version, URL: url, Key: opts.UpdateKey,
		Check: u.Check, Auto: u.Auto, DataDir: a.DataDir,
		Quiet: a.quietMoment, Handoff: opts.Handoff, Log: a.Log,
		BeforeAuto: func(ctx context.Context, from, to string) error {
			_, err := a.Ledger.Append(ctx, KindUpdateInstall, map[string]string{"auto": "true", "from": from, "to": to})
			return err
		},
	})
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
// or of an automatic update (update.auto; field auto "true") as it starts.
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
// journaled under their name first, like every operator action.
func (a *App) InstallUpdate(ctx context.Context, operator string) error {
	st := a.Updates.State()
	if st.Offer == nil {
		return errors.New("no update is available")
	}
	if !st.CanInstall {
		return errors.New("this update cannot be installed now")
	}
	rec := map[string]string{"operator": operator, "from": st.Version, "to": st.Offer.Version}
	if _, err := a.Ledger.Append(ctx, KindUpdateInstall, rec); err != nil {
		return fmt.Errorf("record the update in the ledger: %w", err)
	}
	return a.Updates.Install(ctx)
}
