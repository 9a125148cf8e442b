package uia

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/screen"
)

// Actions ui.action takes. Click and key are fallback input.
const (
	ActInvoke   = "invoke"
	ActFocus    = "focus"
	ActSetValue = "set_value"
	ActClick    = "click"
	ActKey      = "key"
)

// Actions lists the actions, semantic ones first.
var Actions = []string{ActInvoke, ActFocus, ActSetValue, ActClick, ActKey}

// IsFallback reports whether action is fallback input.
func IsFallback(action string) bool { return action == ActClick || action == ActKey }

// Input is the input of ui.snapshot, ui.query and ui.action (each takes
// the fields its spec declares).
type Input struct {
	HWND          uint64  `json:"hwnd,omitempty"`
	ProcessID     int     `json:"process_id,omitempty"`
	MaxDepth      *int    `json:"max_depth,omitempty"`
	MaxNodes      *int    `json:"max_nodes,omitempty"`
	Target        *Target `json:"target,omitempty"`
	Action        string  `json:"action,omitempty"`
	Value         *string `json:"value,omitempty"`
	VirtualKey    *int    `json:"virtual_key,omitempty"`
	AllowFallback bool    `json:"allow_fallback,omitempty"`
}

// Scope returns the input's root.
func (in *Input) Scope() Scope { return Scope{HWND: in.HWND, ProcessID: in.ProcessID} }

func (in *Input) bounds() (depth, nodes int) {
	depth, nodes = DefaultMaxDepth, DefaultMaxNodes
	if in.MaxDepth != nil {
		depth = min(max(*in.MaxDepth, 0), MaxDepth)
	}
	if in.MaxNodes != nil {
		nodes = min(max(*in.MaxNodes, 1), MaxNodes)
	}
	return depth, nodes
}

// SnapshotResult is what ui.snapshot answers.
type SnapshotResult struct {
	Scope Scope   `json:"scope"`
	Roots []*Node `json:"roots"`
	Truncation
	ElapsedMS int64 `json:"elapsed_ms"`
}

// Match is a node found by a query, without its children.
type Match struct {
	Node
	Parent string `json:"parent,omitempty"`
	Depth  int    `json:"depth"`
}

// MaxMatches bounds the matches a query lists (match_count has them all).
const MaxMatches = 100

// QueryResult is what ui.query answers.
type QueryResult struct {
	Scope      Scope   `json:"scope"`
	Target     *Target `json:"target"`
	MatchCount int     `json:"match_count"`
	Matches    []Match `json:"matches"`
	Truncation
	ElapsedMS int64 `json:"elapsed_ms"`
}

// ActionResult is what ui.action answers.
type ActionResult struct {
	Action   string `json:"action"`
	Fallback bool   `json:"fallback"`
	Scope    Scope  `json:"scope"`
	// Element is the target as it was just before the action.
	Element Match `json:"element"`
	// ValueAfter is the value read back after set_value, when readable.
	ValueAfter *string `json:"value_after,omitempty"`
	Truncation
	ElapsedMS int64 `json:"elapsed_ms"`
}

func invalid(op, field, format string, a ...any) error {
	ve := &primitive.ValidationError{Tool: "ui", Operation: op, Field: field, Msg: fmt.Sprintf(format, a...)}
	return primitive.Failed("invalid_input", "%s", ve.Error())
}

// checkScope refuses an input naming two roots.
func checkScope(op string, in *Input) error {
	if in.HWND != 0 && in.ProcessID != 0 {
		return invalid(op, "process_id", "give hwnd or process_id, not both")
	}
	return nil
}

func checkTarget(op string, in *Input) error {
	if in.Target.Empty() {
		return invalid(op, "target", "required, with at least one of automation_id, name, control_type")
	}
	return nil
}

// checkAction validates the fields of ui.action that depend on each other.
// It runs before governance (so no permit is asked for input that cannot
// run) and again when the call runs.
func checkAction(in *Input) error {
	if err := checkScope("action", in); err != nil {
		return err
	}
	if in.Value != nil && in.Action != ActSetValue {
		return invalid("action", "value", "only action set_value takes a value (action is %q)", in.Action)
	}
	if in.Value == nil && in.Action == ActSetValue {
		return invalid("action", "value", "required for action set_value")
	}
	if in.VirtualKey != nil && in.Action != ActKey {
		return invalid("action", "virtual_key", "only action key takes a virtual_key (action is %q)", in.Action)
	}
	if in.VirtualKey == nil && in.Action == ActKey {
		return invalid("action", "virtual_key", "required for action key (a Windows virtual-key code, 1-254)")
	}
	if !IsFallback(in.Action) {
		return nil
	}
	if !in.AllowFallback {
		return primitive.Blocked("fallback_refused", "ui.action: action %q is fallback input and is refused unless field \"allow_fallback\" is true; prefer invoke, focus or set_value", in.Action).
			WithDetails(map[string]any{"field": "allow_fallback"})
	}
	if !in.Scope().Scoped() {
		return primitive.Blocked("fallback_refused", "ui.action: fallback input must be scoped to one window or process: set field \"hwnd\" or \"process_id\"").
			WithDetails(map[string]any{"field": "hwnd"})
	}
	return checkTarget("action", in)
}

// NeedsPermit reports whether a ui.action input is fallback input, which
// needs an operator permit in the ask and trusted modes (docs/DESIGN.md, "Governance").
func NeedsPermit(in *Input) bool { return in.AllowFallback && IsFallback(in.Action) }

// start opens a walk of in's scope on the worker, after the desktop check.
func (s *Service) start(ctx context.Context, p Provider, in *Input) (*walk, error) {
	if err := p.InteractiveDesktop(); err != nil {
		return nil, noDesktop(err, "nothing was read or sent")
	}
	depth, nodes := in.bounds()
	w := &walk{p: p, ctx: ctx, maxDepth: depth, maxNodes: nodes, maxText: s.MaxText, deadline: time.Now().Add(s.Deadline)}
	roots, err := p.Roots(in.Scope())
	if errors.Is(err, ErrNotFound) {
		return nil, primitive.Failed("not_found", "%s: %v", in.Scope(), err)
	}
	if err != nil {
		return nil, primitive.Failed("provider_failed", "find the roots of %s: %v", in.Scope(), err)
	}
	if err := w.run(roots); err != nil {
		w.release()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, primitive.Failed("provider_failed", "walk %s: %v", in.Scope(), err)
	}
	return w, nil
}

// Snapshot is ui.snapshot.
func (s *Service) Snapshot(ctx context.Context, in Input) (*SnapshotResult, error) {
	if err := checkScope("snapshot", &in); err != nil {
		return nil, err
	}
	var res *SnapshotResult
	t0 := time.Now()
	err := s.do(ctx, func(p Provider) error {
		w, err := s.start(ctx, p, &in)
		if err != nil {
			return err
		}
		defer w.release()
		res = &SnapshotResult{Scope: in.Scope(), Roots: w.roots, Truncation: w.truncation()}
		if res.Roots == nil {
			res.Roots = []*Node{}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.ElapsedMS = time.Since(t0).Milliseconds()
	return res, nil
}

func match(e *walked) Match {
	m := Match{Node: *e.node, Depth: e.depth}
	m.Children = nil
	if e.parent != nil {
		m.Parent = e.parent.node.Locator
	}
	return m
}

// Query is ui.query.
func (s *Service) Query(ctx context.Context, in Input) (*QueryResult, error) {
	if err := checkScope("query", &in); err != nil {
		return nil, err
	}
	if err := checkTarget("query", &in); err != nil {
		return nil, err
	}
	var res *QueryResult
	t0 := time.Now()
	err := s.do(ctx, func(p Provider) error {
		w, err := s.start(ctx, p, &in)
		if err != nil {
			return err
		}
		defer w.release()
		found := w.find(in.Target)
		res = &QueryResult{Scope: in.Scope(), Target: in.Target, MatchCount: len(found), Matches: []Match{}, Truncation: w.truncation()}
		for i, e := range found {
			if i == MaxMatches {
				break
			}
			res.Matches = append(res.Matches, match(e))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.ElapsedMS = time.Since(t0).Milliseconds()
	return res, nil
}

// maxCandidates bounds the locators a conflict lists.
const maxCandidates = 20

// Action is ui.action: exactly one element matching the target, then the
// action, refusing rather than guessing.
func (s *Service) Action(ctx context.Context, in Input) (*ActionResult, error) {
	if err := checkAction(&in); err != nil {
		return nil, err
	}
	if err := checkTarget("action", &in); err != nil {
		return nil, err
	}
	var res *ActionResult
	t0 := time.Now()
	err := s.do(ctx, func(p Provider) error {
		w, err := s.start(ctx, p, &in)
		if err != nil {
			return err
		}
		defer w.release()
		found := w.find(in.Target)
		if len(found) != 1 {
			return ambiguous(&in, found, w)
		}
		e := found[0]
		if err := s.admissible(p, &in, e); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		res = &ActionResult{Action: in.Action, Fallback: IsFallback(in.Action), Scope: in.Scope(), Element: match(e), Truncation: w.truncation()}
		if err := s.act(p, &in, e); err != nil {
			return err
		}
		if in.Action == ActSetValue {
			if after, err := p.Props(e.ref); err == nil && after.Value != nil && !after.Password {
				v := clean(*after.Value, s.MaxText)
				res.ValueAfter = &v
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.ElapsedMS = time.Since(t0).Milliseconds()
	return res, nil
}

// ambiguous is the conflict of a target matching zero or several elements.
func ambiguous(in *Input, found []*walked, w *walk) error {
	var locs []string
	for i, e := range found {
		if i == maxCandidates {
			break
		}
		locs = append(locs, e.node.Locator)
	}
	tr := w.truncation()
	details := map[string]any{"match_count": len(found), "candidates": locs, "truncation": tr}
	if len(found) == 0 {
		msg := fmt.Sprintf("ui.action: no element under %s matches the target; nothing was done", in.Scope())
		if tr.Truncated {
			msg += fmt.Sprintf(" (the walk was cut by %s: raise max_depth/max_nodes or narrow the scope)", strings.Join(tr.TruncatedBy, ", "))
		}
		return primitive.Conflict("no_match", "%s", msg).WithDetails(details)
	}
	cands := make([]map[string]any, 0, len(locs))
	for _, e := range found[:len(locs)] {
		cands = append(cands, map[string]any{"locator": e.node.Locator, "name": e.node.Name, "automation_id": e.node.AutomationID, "control_type": e.node.ControlType})
	}
	details["candidates"] = cands
	return primitive.Conflict("ambiguous_target", "ui.action: %d elements under %s match the target (%s); nothing was done. Add automation_id, name or control_type, or scope to an hwnd, to match exactly one",
		len(found), in.Scope(), strings.Join(locs, ", ")).WithDetails(details)
}

// admissible refuses an action the element cannot take, or whose input
// Windows would not deliver, before anything is sent.
func (s *Service) admissible(p Provider, in *Input, e *walked) error {
	n := e.node
	if err := s.operatorSurface(p, in, e); err != nil {
		return err
	}
	if !n.Enabled {
		return primitive.Conflict("element_disabled", "ui.action: %s (%s %q) is disabled; nothing was done", n.Locator, n.ControlType, n.Name)
	}
	elevated, err := p.Elevated(n.ProcessID)
	if err != nil {
		return primitive.Blocked("elevated", "ui.action: cannot tell whether process %d runs elevated (%v); no input sent", n.ProcessID, err).
			WithDetails(map[string]any{"reason": "elevation unknown", "process_id": n.ProcessID})
	}
	if elevated {
		return primitive.Blocked("elevated", "ui.action: process %d runs elevated and Hearth does not, so Windows would refuse or drop its input; no input sent", n.ProcessID).
			WithDetails(map[string]any{"reason": "elevated target", "process_id": n.ProcessID})
	}
	need := map[string]string{ActInvoke: "invoke", ActSetValue: "value"}[in.Action]
	if need != "" && !n.has(need) {
		return primitive.Conflict("pattern_unsupported", "ui.action: %s (%s %q) does not support %s (its patterns: %s); nothing was done",
			n.Locator, n.ControlType, n.Name, in.Action, strings.Join(n.Patterns, ", "))
	}
	if in.Action == ActClick && (n.Offscreen || n.Bounds.Empty()) {
		return primitive.Conflict("offscreen", "ui.action: %s is off screen or has no area; no click sent", n.Locator)
	}
	return nil
}

// noDesktop is the blocked answer when input would not reach the
// person's own desktop: secure_desktop for a UAC prompt or the lock
// screen, no_interactive_desktop otherwise, the reason in plain words.
func noDesktop(err error, done string) error {
	code := "no_interactive_desktop"
	if errors.Is(err, screen.ErrSecureDesktop) {
		code = "secure_desktop"
	}
	return primitive.Blocked(code, "ui automation needs the interactive desktop of the signed-in user: %v; %s", err, done).
		WithDetails(map[string]any{"reason": err.Error()})
}

func (s *Service) act(p Provider, in *Input, e *walked) error {
	// The walk took time: a UAC prompt may have come up since start
	// checked, and input sent now would land on nothing the person sees.
	if err := p.InteractiveDesktop(); err != nil {
		return noDesktop(err, "no input sent")
	}
	var err error
	switch in.Action {
	case ActInvoke:
		err = p.Invoke(e.ref)
	case ActFocus:
		err = p.Focus(e.ref)
	case ActSetValue:
		err = p.SetValue(e.ref, *in.Value)
	case ActClick:
		err = p.Click(in.Scope(), e.ref)
	case ActKey:
		err = p.Key(in.Scope(), e.ref, uint16(*in.VirtualKey))
	default:
		return invalid("action", "action", "%q is not one of %s", in.Action, strings.Join(Actions, ", "))
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotForeground):
		return primitive.Blocked("not_foreground", "ui.action: %v; no input sent", err)
	case errors.Is(err, ErrGone):
		return primitive.Conflict("element_gone", "ui.action: %s vanished before %s could act on it", e.node.Locator, in.Action)
	case errors.Is(err, ErrUnsupported):
		return primitive.Conflict("pattern_unsupported", "ui.action: %s: %v", e.node.Locator, err)
	}
	return primitive.Failed("action_failed", "ui.action %s on %s: %v", in.Action, e.node.Locator, err)
}

// PanelTitle ends the <title> of every control panel page; browsers put
// the page title in their window and document names.
const PanelTitle = "Hearth control panel"
