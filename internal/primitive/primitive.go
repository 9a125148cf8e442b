// Package primitive defines the closed registry of side-effect-bearing
// operations Hearth can perform. Every MCP tool operation, scatter kind,
// recipe step, durable job and operator-approved permit names one primitive
// from this registry, so "closed world" is a property of the types rather
// than of string checks spread around the code.
package primitive

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/hearth-dev/hearth/internal/risk"
)

// Risk classifies what a primitive can do to the host (docs/DESIGN.md, "Governance").
type Risk string

// The risk classes.
const (
	RiskRead    Risk = "read"
	RiskWrite   Risk = "write"
	RiskExec    Risk = "exec"
	RiskUI      Risk = "ui"
	RiskKill    Risk = "kill"
	RiskControl Risk = "control"
)

// Call is the per-call context a primitive runs with.
type Call struct {
	// Route is the hashed conversation route (never a raw client identifier).
	Route string
	// FutureID is set when the call has (or may get) a durable future.
	FutureID string
	// CommandID identifies the side-effecting command for replay detection.
	CommandID string
	// Checked is what governance admitted the call as, for the primitive
	// to hold to when it acts.
	Checked Checked
}

// Checked is what admission found about the files a call changes.
type Checked struct {
	// Ordinary is set when the call runs without asking only because
	// every file it changes is an ordinary file (internal/risk's
	// allowlist): the primitive checks again when it opens each file, and
	// refuses one that is no longer ordinary or no longer at one of Paths.
	Ordinary bool
	// Covered is set, with Ordinary, when an operator's folder rule
	// covers what the allowlist leaves out: the primitive holds the call
	// to Paths only, not to the allowlist.
	Covered bool
	// Paths are the real paths admission found; a write held to them
	// (Ordinary) is refused at a path not among them, and when there are
	// none.
	Paths []string
}

// Target is what one call would act on, as governance needs it to decide
// whether the call asks the operator first (docs/DESIGN.md, "Governance").
type Target struct {
	// Paths are the real (symlink-resolved) absolute paths of the files
	// the call would change.
	Paths []string
	// Files are what the call would do to each of Paths, as the
	// allowlist of ordinary writes (internal/risk) needs it.
	Files []risk.FileFacts
	// App is the program file name (lower case, e.g. "notepad.exe") of
	// the application a UI call would drive; "" when it is not known
	// before the call runs.
	App string
	// Console marks a UI target where typing runs programs (a console,
	// the Run dialog, Explorer): driving it is never one approval for
	// the app.
	Console bool
	// Program marks a call that would start a program or script (ui.open
	// of a file that is one, by its extension or content): an exec.
	Program bool
	// Item says, for a file operation (fs.move, copy, trash, mkdir), which
	// of the call's items each of Files belongs to: Item[i] is the index
	// of Files[i]'s item (0 for a call of one item). Governance names the
	// items that ask on the card; nil for every other call.
	Item []int
}

// Spec describes one primitive: its name, input fields, risk and runner.
type Spec struct {
	// Tool and Operation give the MCP facade the primitive is reached through;
	// Name is always Tool + "." + Operation.
	Tool      string
	Operation string
	Risk      Risk
	// Summary is one line for tool descriptions.
	Summary string
	Fields  []Field
	// Inline marks primitives that always answer inline (no durable future
	// even when slow), such as a bounded wait.
	Inline bool
	// Compound marks a primitive that only submits other primitive calls
	// (run.scatter): it is journaled and replayable as one command — a
	// repeat of its command id answers its first answer and submits nothing
	// — while each call it submits is governed as its own primitive, under
	// a command id derived from the compound's.
	Compound bool
	// Delegates marks a primitive whose only effects on the machine are
	// the calls it makes through the dispatcher, each gated and journaled
	// under a command id of its own (recipe.run's steps). Stopped by an
	// e-stop part way, it leaves nothing of its own in doubt: its cancelled
	// outcome opens no UNKNOWN (the step that was running opens its own).
	// A compound primitive delegates too.
	Delegates bool
	// Precheck, when set, refuses input that can never run (Hearth's own
	// pid, a timeout over the ceiling) before governance asks the operator
	// for a permit that could not help.
	Precheck func(input json.RawMessage) error
	// NeedsPermit, when set, reports whether this input needs an operator
	// permit in the ask and trusted modes whatever the primitive's risk
	// class would otherwise require: UI fallback input (ui.action click or
	// key with allow_fallback) is such an input, semantic UI actions are not
	// (docs/DESIGN.md, "Governance"). It sees validated input and must not fail.
	NeedsPermit func(input json.RawMessage) bool
	// Target, when set, reports what a call would act on: the real paths
	// of the files it would change, or the application it would drive.
	// Governance picks the call's case in the risk table (internal/risk)
	// from it at admission. It sees validated input; a path the call
	// could never act on (outside the roots) is left out, since the call
	// is then refused when it runs.
	Target func(ctx context.Context, route string, input json.RawMessage) (Target, error)
	// Run executes the primitive on already validated input.
	Run func(ctx context.Context, call *Call, input json.RawMessage) (any, error)
	// Quick, when set, is a bounded attempt at Run that the dispatcher
	// makes on the caller's goroutine before it races Run against the
	// inline budget on a goroutine of its own. It answers (done) only after
	// bounded work: a few system calls on one path, no read of unbounded
	// size. Otherwise it declines (done false) having changed nothing and
	// with nothing to keep, and Run then runs exactly as without Quick. It
	// is allowed only on primitives that are never journaled (read risk,
	// not compound), whose attempt may be abandoned and run again.
	Quick func(ctx context.Context, call *Call, input json.RawMessage) (res any, done bool, err error)

	// name is Name, set when the spec is registered (a registered spec's
	// Tool and Operation do not change).
	name string
}

// Name returns "tool.operation" (made once when the spec is registered:
// every call asks for it).
func (s *Spec) Name() string {
	if s.name != "" {
		return s.name
	}
	return s.Tool + "." + s.Operation
}

// Typed builds a Run function from a typed runner: the validated input is
// decoded into I before run is called.
func Typed[I any](run func(ctx context.Context, call *Call, in I) (any, error)) func(context.Context, *Call, json.RawMessage) (any, error) {
	plan := planFor(reflect.TypeFor[I]())
	return func(ctx context.Context, call *Call, raw json.RawMessage) (any, error) {
		in, err := decodeTyped[I](raw, plan)
		if err != nil {
			return nil, err
		}
		return run(ctx, call, in)
	}
}

// decodeTyped decodes validated input into an I (the zero I for none), a
// failure being the primitive's invalid_input answer.
func decodeTyped[I any](raw json.RawMessage, plan fieldPlan) (I, error) {
	var in I
	if len(raw) > 0 {
		if err := decodeInput(raw, plan, &in); err != nil {
			return in, Failed("invalid_input", "decode input: %v", err)
		}
	}
	return in, nil
}

// TypedQuick builds a Quick function from a typed attempt, decoding the
// validated input into I as Typed does (a decode error answers, as it
// would from Run).
func TypedQuick[I any](quick func(ctx context.Context, call *Call, in I) (any, bool, error)) func(context.Context, *Call, json.RawMessage) (any, bool, error) {
	plan := planFor(reflect.TypeFor[I]())
	return func(ctx context.Context, call *Call, raw json.RawMessage) (any, bool, error) {
		in, err := decodeTyped[I](raw, plan)
		if err != nil {
			return nil, true, err
		}
		return quick(ctx, call, in)
	}
}

// Registry is the closed set of primitives, built once at start-up.
type Registry struct {
	byName map[string]*Spec
	order  []*Spec
}

// NewRegistry returns a registry of the given specs; a duplicate name or an
// inconsistent spec is a programming error reported as an error.
func NewRegistry(specs ...*Spec) (*Registry, error) {
	r := &Registry{byName: map[string]*Spec{}}
	for _, s := range specs {
		if err := r.add(s); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *Registry) add(s *Spec) error {
	if s.Tool == "" || s.Operation == "" || s.Run == nil || s.Risk == "" {
		return fmt.Errorf("primitive %q: tool, operation, risk and run are required", s.Name())
	}
	if s.Quick != nil && (s.Risk != RiskRead || s.Compound) {
		return fmt.Errorf("primitive %q: only a read primitive may have a quick attempt (it runs unjournaled on the caller's goroutine)", s.Name())
	}
	if _, dup := r.byName[s.Name()]; dup {
		return fmt.Errorf("primitive %q registered twice", s.Name())
	}
	seen := map[string]bool{}
	for _, f := range s.Fields {
		if f.Name == "operation" || f.Name == "detach" || seen[f.Name] {
			return fmt.Errorf("primitive %q: field %q duplicated or reserved", s.Name(), f.Name)
		}
		seen[f.Name] = true
	}
	// The advertised schema is flat, so a field name must mean one type
	// across all operations of a tool.
	for _, other := range r.Operations(s.Tool) {
		for _, of := range other.Fields {
			for _, f := range s.Fields {
				if f.Name == of.Name && (f.Type != of.Type || f.Nullable != of.Nullable) {
					return fmt.Errorf("primitive %q: field %q has type %s but %s declares %s", s.Name(), f.Name, f.Type, other.Name(), of.Type)
				}
			}
		}
	}
	s.name = s.Tool + "." + s.Operation
	r.byName[s.name] = s
	r.order = append(r.order, s)
	return nil
}

// Lookup returns the primitive called name.
func (r *Registry) Lookup(name string) (*Spec, bool) {
	s, ok := r.byName[name]
	return s, ok
}

// All returns every primitive in registration order.
func (r *Registry) All() []*Spec { return append([]*Spec(nil), r.order...) }

// Tools returns the tool names in first-registration order.
func (r *Registry) Tools() []string {
	var tools []string
	seen := map[string]bool{}
	for _, s := range r.order {
		if !seen[s.Tool] {
			seen[s.Tool] = true
			tools = append(tools, s.Tool)
		}
	}
	return tools
}

// Operations returns the primitives of one tool in registration order.
func (r *Registry) Operations(tool string) []*Spec {
	var ops []*Spec
	for _, s := range r.order {
		if s.Tool == tool {
			ops = append(ops, s)
		}
	}
	return ops
}

// OperationNames lists a tool's operation names, for error messages.
func (r *Registry) OperationNames(tool string) []string {
	var names []string
	for _, s := range r.Operations(tool) {
		names = append(names, s.Operation)
	}
	return names
}

// fieldNames lists the accepted field names of s, sorted, for error text.
func (s *Spec) fieldNames() string {
	names := []string{}
	for _, f := range s.Fields {
		n := f.Name
		if !f.Required {
			n += "?"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "no fields besides operation and detach"
	}
	return strings.Join(names, ", ")
}
