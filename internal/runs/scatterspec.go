package runs

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// ScatterKinds returns the closed allow-list of primitives a scatter item
// may name, in advertised order (a fresh copy). Only those registered
// become kinds. Nothing that kills, controls the host or fans out further
// (machine.batch, machine.process_kill, machine.estop, run.scatter) is
// here, and no tool name can ever be a kind.
func ScatterKinds() []string { return append([]string(nil), scatterKinds[:]...) }

var scatterKinds = [...]string{
	"machine.host_info", "machine.exec", "machine.process_list",
	"fs.stat", "fs.read", "fs.list", "fs.search", "fs.write", "fs.patch",
	"fs.move", "fs.copy", "fs.mkdir", "fs.trash",
	"artifact.list", "artifact.metadata", "artifact.read", "artifact.range", "artifact.search",
	"ui.snapshot", "ui.query", "ui.action",
	"recipe.run",
	"task.get", "task.status", "task.list",
	"run.get", "run.list", "run.events",
}

// scatterExcluded are fields of an allowed kind a scatter item may not
// use: a scatter drives UI only semantically, never with fallback input;
// and its reads of documents take the defaults (the whole text, the first
// sheet), to keep the tool list within its budget.
var scatterExcluded = map[string][]string{
	"ui.action": {"allow_fallback"},
	"fs.read":   {"pages", "sheet", "range", "formulas"},
	"fs.search": {"documents"},
}

type kindSpec struct {
	spec     *primitive.Spec
	excluded []string
}

// Item keys that are not fields of the kind's primitive.
const (
	keyKind = "kind"
	keyDeps = "dependencies"
)

// ScatterSpec builds the run.scatter primitive from the registry of every
// other primitive: the kind enum and the union of the kinds' fields are
// fixed at start-up.
func (s *Service) ScatterSpec(reg *primitive.Registry) (*primitive.Spec, error) {
	s.kinds = map[string]*kindSpec{}
	s.kindNames = nil
	type union struct {
		f     primitive.Field
		kinds []string
		types []string
		first *primitive.Field
	}
	var order []string
	fields := map[string]*union{}
	for _, name := range scatterKinds {
		spec, ok := reg.Lookup(name)
		if !ok {
			continue
		}
		if spec.Risk == primitive.RiskKill || spec.Risk == primitive.RiskControl {
			return nil, fmt.Errorf("scatter kind %s has risk %s", name, spec.Risk)
		}
		k := &kindSpec{spec: spec, excluded: scatterExcluded[name]}
		s.kinds[name] = k
		s.kindNames = append(s.kindNames, name)
		for _, f := range spec.Fields {
			if slices.Contains(k.excluded, f.Name) {
				continue
			}
			if f.Name == keyKind || f.Name == keyDeps {
				return nil, fmt.Errorf("scatter kind %s has a field named %q, which a scatter item uses itself", name, f.Name)
			}
			u := fields[f.Name]
			if u == nil {
				u = &union{f: primitive.Field{Name: f.Name}, first: &f}
				fields[f.Name] = u
				order = append(order, f.Name)
			}
			u.f.Nullable = u.f.Nullable || f.Nullable
			u.kinds = append(u.kinds, name)
			if t := typeName(&f); !slices.Contains(u.types, t) {
				u.types = append(u.types, t)
			}
		}
	}
	if len(s.kindNames) == 0 {
		return nil, errors.New("no scatter kind is registered")
	}
	items := []primitive.Field{
		{Name: keyKind, Type: primitive.TString, Required: true, Enum: s.kindNames, Desc: "The primitive to call (tool.operation)."},
		{Name: keyDeps, Type: primitive.TArray, Max: primitive.Bound(MaxScatter),
			Items: &primitive.Field{Desc: "Index into calls[] or a future id (fut_...) of this conversation."},
			Desc:  "Calls that must complete first: indexes into calls[] or future ids (fut_...) of this conversation. If one does not complete, this call is blocked."},
	}
	for _, name := range order {
		u := fields[name]
		// Typed strictly per kind at submit. A field every kind types alike
		// is advertised as that type or a $future reference (nested anyOf);
		// one whose type differs between kinds is advertised untyped.
		if len(u.types) == 1 && u.first != nil && u.first.Type != "" {
			typed := *u.first
			typed.Required, typed.OrRef, typed.Desc = false, true, kindGroups(u.kinds, s.kindNames)+": "+u.first.Desc
			items = append(items, typed)
			continue
		}
		u.f.Desc = strings.Join(u.types, " | ") + " or $future ref. " + kindGroups(u.kinds, s.kindNames)
		items = append(items, u.f)
	}
	return &primitive.Spec{Tool: "run", Operation: "scatter", Risk: primitive.RiskRead, Inline: true, Compound: true,
		Summary: "run up to 100 primitive calls as durable futures at once; answers {state, futures:[{index, future_id, kind}]} immediately; each result arrives in this conversation's mailbox in completion order. Each call is governed as its own primitive.",
		Fields: []primitive.Field{{Name: "calls", Type: primitive.TArray, Required: true, Min: primitive.Bound(1), Max: primitive.Bound(MaxScatter),
			Desc:  `Calls {kind, ...that primitive's fields (see its tool), dependencies?}. Any field value may be {"$future": index-or-future-id, "$path": "result.field"}: it adds the dependency and is replaced by that call's value once it completed.`,
			Items: &primitive.Field{Type: primitive.TObject, Fields: items}}},
		Run: dispatch.WithEngine(s.scatter),
	}, nil
}

// Kinds returns the scatter kind names, in advertised order.
func (s *Service) Kinds() []string { return append([]string(nil), s.kindNames...) }

func typeName(f *primitive.Field) string {
	t := f.Type
	switch {
	case t == "":
		t = "any"
	case t == primitive.TArray && f.Items != nil && f.Items.Type != "" && f.Items.Type != primitive.TObject:
		t = f.Items.Type + "[]"
	}
	if f.Nullable {
		t += "|null"
	}
	return t
}

// kindGroups names the kinds using a field compactly: "fs.*" when every
// registered kind of that tool uses it.
func kindGroups(using, all []string) string {
	byTool := map[string][]string{}
	var tools []string
	for _, k := range all {
		tool, _, _ := strings.Cut(k, ".")
		if _, ok := byTool[tool]; !ok {
			tools = append(tools, tool)
		}
		byTool[tool] = append(byTool[tool], k)
	}
	var parts []string
	for _, tool := range tools {
		var mine []string
		for _, k := range byTool[tool] {
			if slices.Contains(using, k) {
				mine = append(mine, k)
			}
		}
		switch {
		case len(mine) == 0:
		case len(mine) == len(byTool[tool]) && len(mine) > 1:
			parts = append(parts, tool+".*")
		default:
			parts = append(parts, mine...)
		}
	}
	return strings.Join(parts, ", ")
}
