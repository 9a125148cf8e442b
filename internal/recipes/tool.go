package recipes

import (
	"context"
	"errors"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
)

type nameInput struct {
	Name string `json:"name"`
}

type suggestInput struct {
	Threshold int `json:"threshold"`
	MinLength int `json:"min_length"`
}

// Specs returns the recipe tool's primitives.
func (b *Book) Specs() []*primitive.Spec {
	name := func(req bool) primitive.Field {
		return primitive.Field{Name: "name", Type: primitive.TString, Required: req, Desc: "Recipe name (letters, digits, . _ -; stats: omit for every recipe)."}
	}
	return []*primitive.Spec{
		{Tool: "recipe", Operation: "create", Risk: primitive.RiskWrite, Inline: true,
			Summary: "store a recipe; every step input is validated now against its primitive. ${param} placeholders are allowed only inside string values, and never where a value would be code: not in a command, an interpreter's options, -c/-e/-Command code or script path, nor any argument of cmd, .bat/.cmd, wsl or mshta (pass values as arguments after a script file or after sh/python -c code).",
			Fields: []primitive.Field{name(true),
				{Name: "description", Type: primitive.TString, Desc: "What the recipe does."},
				{Name: "steps", Type: primitive.TArray, Min: primitive.Bound(1), Max: primitive.Bound(float64(b.MaxSteps)),
					Desc: "Steps run in order: {primitive, input} with input the primitive's fields, e.g. {\"primitive\":\"machine.exec\",\"input\":{\"command\":\"git\",\"args\":[\"log\",\"${ref}\"]}}.",
					Items: &primitive.Field{Type: primitive.TObject, Fields: []primitive.Field{
						{Name: "primitive", Type: primitive.TString, Required: true, Enum: b.names},
						{Name: "input", Type: primitive.TObject, Required: true, Desc: "The primitive's fields."},
					}}},
			},
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in CreateInput) (any, error) {
				return b.Create(ctx, call.Route, in)
			})},
		{Tool: "recipe", Operation: "list", Risk: primitive.RiskRead, Inline: true,
			Summary: "every recipe: name, description, step primitives, parameters, run count.",
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, _ struct{}) (any, error) {
				l, err := b.List(ctx)
				if err != nil {
					return nil, err
				}
				return map[string]any{"recipes": l}, nil
			})},
		{Tool: "recipe", Operation: "get", Risk: primitive.RiskRead, Inline: true, Fields: []primitive.Field{name(true)},
			Summary: "a recipe with its steps and parameters.",
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in nameInput) (any, error) {
				r, err := b.Get(ctx, in.Name)
				if errors.Is(err, ErrNoRecipe) {
					return nil, notFound("get", in.Name)
				}
				return r, err
			})},
		{Tool: "recipe", Operation: "stats", Risk: primitive.RiskRead, Inline: true, Fields: []primitive.Field{name(false)},
			Summary: "run counts, failures by step, average duration; with name, also recent traces (per step: input sha256, state, timing).",
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in nameInput) (any, error) {
				st, err := b.Stats(ctx, in.Name)
				if err != nil {
					return nil, err
				}
				if in.Name != "" {
					return st[0], nil
				}
				return map[string]any{"recipes": st}, nil
			})},
		{Tool: "recipe", Operation: "delete", Risk: primitive.RiskWrite, Inline: true, Fields: []primitive.Field{name(true)},
			Summary: "delete a recipe (its run history stays).",
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in nameInput) (any, error) {
				if err := b.Delete(ctx, in.Name); err != nil {
					return nil, err
				}
				return map[string]any{"deleted": in.Name}, nil
			})},
		{Tool: "recipe", Operation: "run", Risk: primitive.RiskWrite, Delegates: true,
			Fields: []primitive.Field{name(true),
				{Name: "params", Type: primitive.TObject, Values: primitive.TString, Desc: "Values for the recipe's ${param} placeholders (strings; each replaces text inside one string, never adds an argument or field)."}},
			Summary: "run the steps in order, each governed as its own call; stops at the first step that does not complete (exec: non-zero exit). Answers the per-step trace and results.",
			Run:     dispatch.WithEngine(b.Run)},
		{Tool: "recipe", Operation: "suggest", Risk: primitive.RiskRead, Inline: true,
			Fields: []primitive.Field{
				{Name: "threshold", Type: primitive.TInteger, Min: primitive.Bound(2), Max: primitive.Bound(100), Desc: "Minimum repetitions (default 3)."},
				{Name: "min_length", Type: primitive.TInteger, Min: primitive.Bound(2), Max: primitive.Bound(MaxPatternLength), Desc: "Minimum calls in a pattern (default 2)."}},
			Summary: "repeated contiguous call patterns of this conversation, with counts; creates nothing.",
			Run: primitive.Typed(func(ctx context.Context, call *primitive.Call, in suggestInput) (any, error) {
				if in.Threshold == 0 {
					in.Threshold = 3
				}
				if in.MinLength == 0 {
					in.MinLength = 2
				}
				return b.Suggest(ctx, call.Route, in.Threshold, in.MinLength)
			})},
	}
}
