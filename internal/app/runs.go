package app

import (
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/recipes"
	"github.com/hearth-dev/hearth/internal/runs"
)

// newRegistry builds the closed registry from every other tool's specs
// plus the recipe and run tools. Recipes offer the step primitives that
// are registered, and run.scatter's kinds are the allowed primitives
// registered with everything else, so the registry is built in three
// passes and run.scatter comes last.
func (a *App) newRegistry(specs []*primitive.Spec) (*primitive.Registry, error) {
	base, err := primitive.NewRegistry(specs...)
	if err != nil {
		return nil, err
	}
	a.Runs = runs.New(a.DB, a.Log)
	a.Runs.OracleArmed = func() bool { return a.Config.Oracle.Armed }
	a.Recipes = recipes.New(a.DB, base, a.Runs.Events, a.Config.RecipeMaxSteps, a.Log)
	specs = append(specs, a.Recipes.Specs()...)
	specs = append(specs, a.Runs.Specs()...)
	withRuns, err := primitive.NewRegistry(specs...)
	if err != nil {
		return nil, err
	}
	scatter, err := a.Runs.ScatterSpec(withRuns)
	if err != nil {
		return nil, err
	}
	return primitive.NewRegistry(append(specs, scatter)...)
}

// gates are the dispatcher's gates: each conversation's top-level calls
// are recorded for recipe.suggest (a gate that never refuses).
func (a *App) gates() []dispatch.Gate { return []dispatch.Gate{a.Runs.Events.Observe} }

// connectRuns hands the dispatcher to the run and recipe tools, whose
// primitives (built into the dispatcher's registry) submit calls to it.
func (a *App) connectRuns() {
	a.Runs.Dispatcher = a.Dispatcher
	a.Recipes.Dispatcher = a.Dispatcher
}
