package uia

import (
	"context"
	"encoding/json"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// rootFields are the scope and bounds every ui operation takes.
func rootFields() []primitive.Field {
	return []primitive.Field{
		{Name: "hwnd", Type: primitive.TInteger, Min: primitive.Bound(1), Desc: "Window handle (decimal) to walk from. Default: the desktop."},
		{Name: "process_id", Type: primitive.TInteger, Min: primitive.Bound(1), Desc: "Walk that process's top-level windows instead (not with hwnd)."},
		{Name: "max_depth", Type: primitive.TInteger, Min: primitive.Bound(0), Max: primitive.Bound(MaxDepth), Desc: "Levels below the roots (default 6)."},
		{Name: "max_nodes", Type: primitive.TInteger, Min: primitive.Bound(1), Max: primitive.Bound(MaxNodes), Desc: "Elements read at most (default 500)."},
	}
}

func targetField() primitive.Field {
	s := primitive.Field{Type: primitive.TString}
	return primitive.Field{Name: "target", Type: primitive.TObject, Required: true,
		Desc: "Exact match: automation_id (case-sensitive), name (any case), control_type (Button, Edit, ...); at least one.",
		Fields: []primitive.Field{
			{Name: "automation_id", Type: s.Type},
			{Name: "name", Type: s.Type},
			{Name: "control_type", Type: s.Type},
		}}
}

// Specs returns the ui tool's primitives. Snapshot and query only read;
// action has the ui risk class, and its fallback input needs a permit in
// the ask and trusted modes (NeedsPermit).
func (s *Service) Specs() []*primitive.Spec {
	query := append(rootFields(), targetField())
	action := append(rootFields(), targetField(),
		primitive.Field{Name: "action", Type: primitive.TString, Required: true, Enum: Actions,
			Desc: "invoke, focus, set_value act through UI Automation; click and key are fallback input."},
		primitive.Field{Name: "value", Type: primitive.TString, Desc: "Text for set_value."},
		primitive.Field{Name: "virtual_key", Type: primitive.TInteger, Min: primitive.Bound(1), Max: primitive.Bound(254), Desc: "Virtual-key code for key (13 Enter, 27 Esc)."},
		primitive.Field{Name: "allow_fallback", Type: primitive.TBoolean, Desc: "Opt in to click/key: needs hwnd or process_id and an operator permit in every mode."},
	)
	decode := func(raw json.RawMessage) (*Input, bool) {
		var in Input
		if json.Unmarshal(raw, &in) != nil {
			return nil, false
		}
		return &in, true
	}
	return []*primitive.Spec{
		{Tool: "ui", Operation: "snapshot", Risk: primitive.RiskRead, Fields: rootFields(),
			Summary: "bounded tree of nodes {locator, name, automation_id, class_name, control_type, process_id, hwnd, enabled, offscreen, focused, bounds, patterns, value, children}; locators hold within one answer; truncated_by names the bound hit.",
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in Input) (any, error) {
				return s.Snapshot(ctx, in)
			})},
		{Tool: "ui", Operation: "query", Risk: primitive.RiskRead, Fields: query,
			Summary: "the nodes matching target, with parent locators, within the same bounds.",
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in Input) (any, error) {
				return s.Query(ctx, in)
			})},
		{Tool: "ui", Operation: "action", Risk: primitive.RiskUI, Fields: action,
			Summary: "act on the one element matching target (none or several: conflict listing locators). Elevated targets and a locked desktop are blocked.",
			Precheck: func(raw json.RawMessage) error {
				in, ok := decode(raw)
				if !ok {
					return nil
				}
				return checkAction(in)
			},
			NeedsPermit: func(raw json.RawMessage) bool {
				// Input that does not decode is refused later; until then
				// it is treated as fallback input (fail closed).
				in, ok := decode(raw)
				return !ok || NeedsPermit(in)
			},
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in Input) (any, error) {
				return s.Action(ctx, in)
			})},
	}
}
