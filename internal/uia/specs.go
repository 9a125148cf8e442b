package uia

import (
	"context"
	"encoding/json"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// rootFields are the scope and bounds every ui operation takes.
func rootFields() []primitive.Field {
	return []primitive.Field{
		{Name: "hwnd", Type: primitive.TInteger, Min: primitive.Bound(1), Desc: "Window handle to walk from or capture (default: the desktop; screenshot: monitor 1)."},
		{Name: "process_id", Type: primitive.TInteger, Min: primitive.Bound(1), Desc: "Or this process's top-level windows (screenshot: its topmost)."},
		{Name: "max_depth", Type: primitive.TInteger, Min: primitive.Bound(0), Max: primitive.Bound(MaxDepth), Desc: "Levels below the roots (default 6)."},
		{Name: "max_nodes", Type: primitive.TInteger, Min: primitive.Bound(1), Max: primitive.Bound(MaxNodes), Desc: "Elements read (default 500)."},
	}
}

func targetField() primitive.Field {
	s := primitive.Field{Type: primitive.TString}
	return primitive.Field{Name: "target", Type: primitive.TObject, Required: true,
		Desc: "Exact match; name ignores case; control_type e.g. Button, Edit.",
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
			Desc: "click and key are fallback input."},
		primitive.Field{Name: "value", Type: primitive.TString, Desc: "For set_value."},
		primitive.Field{Name: "virtual_key", Type: primitive.TInteger, Min: primitive.Bound(1), Max: primitive.Bound(254), Desc: "For key: virtual-key code (13 Enter)."},
		primitive.Field{Name: "allow_fallback", Type: primitive.TBoolean, Desc: "Required for click/key, with hwnd or process_id; needs an operator permit."},
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
			Summary: "bounded tree of nodes {locator, name, automation_id, control_type, bounds, patterns, value, children, ...}; locators hold within one answer.",
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in Input) (any, error) {
				return s.Snapshot(ctx, in)
			})},
		{Tool: "ui", Operation: "query", Risk: primitive.RiskRead, Fields: query,
			Summary: "nodes matching target, with parent locators.",
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in Input) (any, error) {
				return s.Query(ctx, in)
			})},
		{Tool: "ui", Operation: "action", Risk: primitive.RiskUI, Fields: action, Target: s.target,
			Summary: "act on the one node matching target (else conflict listing locators); elevated targets and a locked desktop are blocked.",
			Precheck: func(raw json.RawMessage) error {
				in, ok := decode(raw)
				if !ok {
					return nil
				}
				return checkAction(in)
			},
			NeedsPermit: func(raw json.RawMessage) bool {
				// Input that does not decode is refused later; until then
				// it is treated as fallback input (fail closed). On a host
				// found without UI Automation no input can be sent, and the
				// operator is not asked about a call that will be refused.
				in, ok := decode(raw)
				return !ok || NeedsPermit(in) && !s.refusesAll()
			},
			Run: primitive.Typed(func(ctx context.Context, _ *primitive.Call, in Input) (any, error) {
				return s.Action(ctx, in)
			})},
	}
}
