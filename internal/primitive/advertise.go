// What tools/list advertises: each field as a JSON Schema fragment and
// each tool's one flat schema and description.

package primitive

import (
	"fmt"
	"strings"
)

// JSONSchema renders f as a JSON Schema fragment using only widely supported
// keywords.
func (f *Field) JSONSchema() map[string]any {
	if f.OrRef {
		typed := *f
		typed.OrRef, typed.Desc = false, ""
		if typed.Type == TArray && typed.Items != nil && !typed.Items.OrRef && typed.Items.Type != TObject {
			typed.Items = withRef(typed.Items, true)
		}
		out := map[string]any{"anyOf": []any{typed.JSONSchema(), refSchema}}
		if f.Desc != "" {
			out["description"] = f.Desc
		}
		return out
	}
	m := map[string]any{}
	if f.Type != "" {
		if f.Nullable {
			m["type"] = []string{f.Type, "null"}
		} else {
			m["type"] = f.Type
		}
	}
	if f.Desc != "" {
		m["description"] = f.Desc
	}
	if len(f.Enum) > 0 {
		m["enum"] = f.Enum
	}
	if f.Type == TArray && f.Items != nil {
		m["items"] = f.Items.JSONSchema()
	}
	if f.Type == TObject {
		if f.Fields != nil {
			props := map[string]any{}
			var req []string
			for i := range f.Fields {
				props[f.Fields[i].Name] = f.Fields[i].JSONSchema()
				if f.Fields[i].Required {
					req = append(req, f.Fields[i].Name)
				}
			}
			m["properties"] = props
			if len(req) > 0 {
				m["required"] = req
			}
			m["additionalProperties"] = false
		} else if f.Values != "" {
			m["additionalProperties"] = map[string]any{"type": f.Values}
		}
	}
	return m
}

// ToolSchema returns the flat advertised input schema of a tool: operation
// as an enum, the union of every operation's fields as properties (each
// description names the operations that take it), required ["operation"],
// additionalProperties false, and no top-level combinator. Strictness per
// operation is enforced by Decode, not by the advertised schema.
func (r *Registry) ToolSchema(tool string) map[string]any {
	ops := r.Operations(tool)
	props := map[string]any{}
	users := map[string][]string{}
	first := map[string]*Field{}
	var order []string
	for _, s := range ops {
		for i := range s.Fields {
			f := &s.Fields[i]
			if first[f.Name] == nil {
				first[f.Name] = f
				order = append(order, f.Name)
			}
			users[f.Name] = append(users[f.Name], s.Operation)
		}
	}
	for _, name := range order {
		sch := first[name].JSONSchema()
		desc, _ := sch["description"].(string)
		sch["description"] = "(" + strings.Join(users[name], ", ") + ") " + desc
		props[name] = sch
	}
	props["operation"] = map[string]any{"type": "string", "enum": r.OperationNames(tool)}
	props["detach"] = map[string]any{"type": "boolean", "description": "Return {state:\"pending\", future_id} at once; the result arrives on a later call."}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             []string{"operation"},
		"additionalProperties": false,
	}
}

// ToolDescription renders a compact per-operation field guide for a tool.
func (r *Registry) ToolDescription(tool, intro string) string {
	var b strings.Builder
	b.WriteString(intro)
	b.WriteString(" Operations:")
	for _, s := range r.Operations(tool) {
		fmt.Fprintf(&b, "\n- %s(%s): %s", s.Operation, s.fieldList(), s.Summary)
	}
	return b.String()
}

func (s *Spec) fieldList() string {
	var parts []string
	for _, f := range s.Fields {
		n := f.Name
		if !f.Required {
			n += "?"
		}
		parts = append(parts, n)
	}
	return strings.Join(parts, ", ")
}
