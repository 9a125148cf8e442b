// Package recipes holds the recipe tool: named, parameterised sequences of
// primitive steps (machine.exec, fs.read, fs.write, fs.patch, task.submit),
// validated when created, run one step after another through the
// dispatcher's governed path, traced and counted; and suggestions of
// repeated call patterns, which never create a recipe by themselves.
//
// Recipes are shared by every conversation of this PC.
package recipes

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/runs"
	"github.com/hearth-dev/hearth/internal/store"
)

// StepPrimitives returns the closed allow-list of primitives a step may
// name (a fresh copy); only the registered ones are offered.
func StepPrimitives() []string { return append([]string(nil), stepPrimitives[:]...) }

var stepPrimitives = [...]string{"machine.exec", "fs.read", "fs.write", "fs.patch", "fs.move", "fs.copy", "fs.mkdir", "fs.trash", "task.submit"}

// Bounds.
const (
	MaxDescription = 2000
	MaxParamBytes  = 64 << 10
	MaxList        = 200
	recentRuns     = 5
)

var recipeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Book is the recipe store and runner. recipe.run receives the
// dispatcher that runs it with each call (dispatch.WithEngine) and runs
// its steps through that one.
type Book struct {
	DB     *store.DB
	Events *runs.Events
	Log    *slog.Logger
	// MaxSteps is recipe_max_steps.
	MaxSteps int

	steps map[string]*primitive.Spec
	names []string
}

// New returns a Book whose steps may use the registered step primitives
// of reg.
func New(db *store.DB, reg *primitive.Registry, events *runs.Events, maxSteps int, log *slog.Logger) *Book {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Book{DB: db, Events: events, Log: log, MaxSteps: maxSteps, steps: map[string]*primitive.Spec{}}
	for _, name := range stepPrimitives {
		if s, ok := reg.Lookup(name); ok {
			b.steps[name] = s
			b.names = append(b.names, name)
		}
	}
	return b
}

// Step is one recipe step.
type Step struct {
	Primitive string          `json:"primitive"`
	Input     json.RawMessage `json:"input"`
}

// Recipe is a stored recipe.
type Recipe struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Steps       []Step    `json:"steps"`
	Params      []string  `json:"params"`
	CreatedAt   time.Time `json:"created_at"`
}

// CreateInput is recipe.create's input.
type CreateInput struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Steps       []Step `json:"steps"`
}

func invalid(op, field, format string, a ...any) error {
	return primitive.Failed("invalid_input", "recipe.%s: field %q: %s", op, field, fmt.Sprintf(format, a...))
}

func notFound(op, name string) error {
	return primitive.Failed("not_found", "recipe.%s: no recipe named %q", op, name)
}

func checkName(op, name string) error {
	if !recipeName.MatchString(name) {
		return invalid(op, "name", "%q is not a recipe name: letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64", name)
	}
	return nil
}

// Create validates every step against its primitive (placeholders allowed
// only inside string values, and never where a program would run them as
// code: see checkCodePlaceholders) and stores the recipe.
func (b *Book) Create(ctx context.Context, route string, in CreateInput) (*Recipe, error) {
	if err := checkName("create", in.Name); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(in.Description) > MaxDescription {
		return nil, invalid("create", "description", "at most %d characters", MaxDescription)
	}
	if len(in.Steps) == 0 {
		return nil, invalid("create", "steps", "give at least one step")
	}
	if len(in.Steps) > b.MaxSteps {
		return nil, invalid("create", "steps", "has %d steps; recipe_max_steps is %d", len(in.Steps), b.MaxSteps)
	}
	params := map[string]bool{}
	for i, st := range in.Steps {
		at := fmt.Sprintf("steps[%d]", i)
		spec := b.steps[st.Primitive]
		if spec == nil {
			return nil, invalid("create", at+".primitive", "%q is not a step primitive; one of %s", st.Primitive, strings.Join(b.names, ", "))
		}
		v, err := dispatch.DecodeJSON(st.Input)
		if err != nil {
			return nil, invalid("create", at+".input", "not JSON: %v", err)
		}
		names, err := placeholders(v, at+".input")
		if err != nil {
			return nil, primitive.Failed("invalid_input", "recipe.create: %v", err)
		}
		for n := range names {
			params[n] = true
		}
		if err := validateStep(spec, st.Input); err != nil {
			return nil, primitive.Failed("invalid_input", "recipe.create: %s.input: %v", at, err)
		}
		if err := checkCodePlaceholders("create", st.Primitive, v, at+".input"); err != nil {
			return nil, err
		}
	}
	plist := make([]string, 0, len(params))
	for p := range params {
		plist = append(plist, p)
	}
	sort.Strings(plist)
	stepsJSON, err := json.Marshal(in.Steps)
	if err != nil {
		return nil, err
	}
	paramsJSON, _ := json.Marshal(plist)
	id := primitive.NewID("rcp")
	ctx = context.WithoutCancel(ctx)
	err = b.DB.InTx(ctx, func(tx *sql.Tx) error {
		var exists int
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM recipes WHERE name = ?)`, in.Name).Scan(&exists); err != nil {
			return err
		}
		if exists != 0 {
			return primitive.Conflict("recipe_exists", "recipe.create: a recipe named %q exists; delete it first or choose another name", in.Name)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO recipes(id, name, description, steps, params, route, created_at) VALUES (?,?,?,?,?,?,?)`,
			id, in.Name, in.Description, string(stepsJSON), string(paramsJSON), route, time.Now().UnixMilli()); err != nil {
			return fmt.Errorf("store recipe: %w", err)
		}
		prims := make([]string, len(in.Steps))
		for i, st := range in.Steps {
			prims[i] = st.Primitive
		}
		return runs.AppendTx(ctx, tx, "", runs.KindRecipeCreated, id, map[string]any{"name": in.Name, "steps": prims, "params": plist})
	})
	if err != nil {
		return nil, err
	}
	return b.Get(ctx, in.Name)
}

// validateStep checks a step input strictly against its primitive.
func validateStep(spec *primitive.Spec, input json.RawMessage) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(input, &obj); err != nil || obj == nil {
		return errors.New("must be an object of the primitive's fields")
	}
	return spec.ValidateObject(obj)
}

// ErrNoRecipe is returned for an unknown recipe name.
var ErrNoRecipe = errors.New("no such recipe")

// Get returns a recipe by name.
func (b *Book) Get(ctx context.Context, name string) (*Recipe, error) {
	var r Recipe
	var steps, params string
	var created int64
	err := b.DB.R.QueryRowContext(ctx, `SELECT id, name, description, steps, params, created_at FROM recipes WHERE name = ?`, name).
		Scan(&r.ID, &r.Name, &r.Description, &steps, &params, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrNoRecipe, name)
	}
	if err != nil {
		return nil, fmt.Errorf("read recipe %s: %w", name, err)
	}
	if err := json.Unmarshal([]byte(steps), &r.Steps); err != nil {
		return nil, fmt.Errorf("decode recipe %s: %w", name, err)
	}
	if err := json.Unmarshal([]byte(params), &r.Params); err != nil {
		return nil, fmt.Errorf("decode recipe %s: %w", name, err)
	}
	r.CreatedAt = time.UnixMilli(created).UTC()
	return &r, nil
}

// Summary is one row of recipe.list.
type Summary struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Steps       []string  `json:"steps"`
	Params      []string  `json:"params"`
	Runs        int       `json:"runs"`
	CreatedAt   time.Time `json:"created_at"`
}

// List returns every recipe by name.
func (b *Book) List(ctx context.Context) ([]Summary, error) {
	rows, err := b.DB.R.QueryContext(ctx, `SELECT r.name, r.description, r.steps, r.params, r.created_at,
		(SELECT COUNT(*) FROM recipe_runs rr WHERE rr.recipe_id = r.id) FROM recipes r ORDER BY r.name LIMIT ?`, MaxList)
	if err != nil {
		return nil, fmt.Errorf("list recipes: %w", err)
	}
	defer rows.Close()
	out := []Summary{}
	for rows.Next() {
		var s Summary
		var steps, params string
		var created int64
		if err := rows.Scan(&s.Name, &s.Description, &steps, &params, &created, &s.Runs); err != nil {
			return nil, fmt.Errorf("list recipes: %w", err)
		}
		var st []Step
		if json.Unmarshal([]byte(steps), &st) == nil {
			for _, x := range st {
				s.Steps = append(s.Steps, x.Primitive)
			}
		}
		if json.Unmarshal([]byte(params), &s.Params) != nil || s.Params == nil {
			s.Params = []string{}
		}
		s.CreatedAt = time.UnixMilli(created).UTC()
		out = append(out, s)
	}
	return out, rows.Err()
}

// Delete removes a recipe; its run history stays.
func (b *Book) Delete(ctx context.Context, name string) error {
	ctx = context.WithoutCancel(ctx)
	return b.DB.InTx(ctx, func(tx *sql.Tx) error {
		var id string
		err := tx.QueryRowContext(ctx, `SELECT id FROM recipes WHERE name = ?`, name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("delete", name)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM recipes WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete recipe: %w", err)
		}
		return runs.AppendTx(ctx, tx, "", runs.KindRecipeDeleted, id, map[string]any{"name": name})
	})
}

// Stats are a recipe's run counts.
type Stats struct {
	Name           string         `json:"name"`
	Runs           int            `json:"runs"`
	Completed      int            `json:"completed"`
	Failed         int            `json:"failed"`
	AvgDurationMS  int64          `json:"avg_duration_ms"`
	LastRunAt      *time.Time     `json:"last_run_at,omitempty"`
	LastState      string         `json:"last_state,omitempty"`
	FailuresByStep map[string]int `json:"failures_by_step"`
	RecentRuns     []RunRecord    `json:"recent_runs,omitempty"`
}

// RunRecord is one finished run with its trace.
type RunRecord struct {
	ID         string      `json:"id"`
	State      string      `json:"state"`
	FailedStep *int        `json:"failed_step,omitempty"`
	StartedAt  time.Time   `json:"started_at"`
	DurationMS int64       `json:"duration_ms"`
	Trace      []StepTrace `json:"trace"`
}

// Stats returns one recipe's stats with its recent traces, or (name "")
// every recipe's counts.
func (b *Book) Stats(ctx context.Context, name string) ([]Stats, error) {
	q := `SELECT r.id, r.name FROM recipes r`
	args := []any{}
	if name != "" {
		q += ` WHERE r.name = ?`
		args = append(args, name)
	}
	rows, err := b.DB.R.QueryContext(ctx, q+` ORDER BY r.name LIMIT ?`, append(args, MaxList)...)
	if err != nil {
		return nil, fmt.Errorf("recipe stats: %w", err)
	}
	type rec struct{ id, name string }
	var recs []rec
	for rows.Next() {
		var r rec
		if err := rows.Scan(&r.id, &r.name); err != nil {
			rows.Close()
			return nil, err
		}
		recs = append(recs, r)
	}
	rows.Close()
	if name != "" && len(recs) == 0 {
		return nil, notFound("stats", name)
	}
	out := []Stats{}
	for _, r := range recs {
		st := Stats{Name: r.name, FailuresByStep: map[string]int{}}
		runRows, err := b.DB.R.QueryContext(ctx, `SELECT id, state, failed_step, trace, started_at, finished_at FROM recipe_runs WHERE recipe_id = ? ORDER BY started_at DESC, id`, r.id)
		if err != nil {
			return nil, fmt.Errorf("recipe stats: %w", err)
		}
		var total int64
		for runRows.Next() {
			var rr RunRecord
			var failed sql.NullInt64
			var trace string
			var started, finished int64
			if err := runRows.Scan(&rr.ID, &rr.State, &failed, &trace, &started, &finished); err != nil {
				runRows.Close()
				return nil, err
			}
			st.Runs++
			if rr.State == primitive.StateCompleted {
				st.Completed++
			} else {
				st.Failed++
			}
			if failed.Valid {
				i := int(failed.Int64)
				rr.FailedStep = &i
				st.FailuresByStep[fmt.Sprint(i)]++
			}
			rr.StartedAt = time.UnixMilli(started).UTC()
			rr.DurationMS = finished - started
			total += rr.DurationMS
			if st.LastRunAt == nil {
				t := rr.StartedAt
				st.LastRunAt, st.LastState = &t, rr.State
			}
			if name != "" && len(st.RecentRuns) < recentRuns {
				if err := json.Unmarshal([]byte(trace), &rr.Trace); err == nil {
					st.RecentRuns = append(st.RecentRuns, rr)
				}
			}
		}
		runRows.Close()
		if st.Runs > 0 {
			st.AvgDurationMS = total / int64(st.Runs)
		}
		out = append(out, st)
	}
	return out, nil
}

// allowedStep reports whether name is a step primitive here.
func (b *Book) allowedStep(name string) bool { return slices.Contains(b.names, name) }
