package app

import (
	"log/slog"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/recipes"
	"github.com/hearth-dev/hearth/internal/runs"
	"github.com/hearth-dev/hearth/internal/store"
	"github.com/hearth-dev/hearth/internal/wake"
)

// newRuns builds the run service: durable runs, continuations (a due
// browser_tab continuation wakes its bound tab through wake), the event
// log and each conversation's call history, which recipe.suggest reads.
func newRuns(db *store.DB, log *slog.Logger, cfg config.Config, wk *wake.Service, arrivals *dispatch.Arrivals) *runs.Service {
	rs := runs.New(db, log, arrivals)
	rs.OracleArmed = func() bool { return cfg.Oracle.Armed }
	rs.Tabs = wk
	return rs
}

// withRunTools is the closed registry: every other tool's specs plus the
// recipe and run tools. run.scatter's kinds are the allowed primitives
// registered with everything else, so it is built last, from a registry
// holding the rest.
func withRunTools(specs []*primitive.Spec, book *recipes.Book, rs *runs.Service) (*primitive.Registry, error) {
	specs = append(specs, book.Specs()...)
	specs = append(specs, rs.Specs()...)
	withRuns, err := primitive.NewRegistry(specs...)
	if err != nil {
		return nil, err
	}
	scatter, err := rs.ScatterSpec(withRuns)
	if err != nil {
		return nil, err
	}
	return primitive.NewRegistry(append(specs, scatter)...)
}

// gates are the dispatcher's gates: each conversation's top-level calls
// are recorded for recipe.suggest (a gate that never refuses).
func (a *App) gates() []dispatch.Gate { return []dispatch.Gate{a.Runs.Events.Observe} }
