package primitive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// JSON types a field may declare.
const (
	TString  = "string"
	TInteger = "integer"
	TNumber  = "number"
	TBoolean = "boolean"
	TArray   = "array"
	TObject  = "object"
)

// Field is one input field of a primitive. Validation is strict: a value of
// another type, an unknown nested key, or a missing required field is
// rejected with an error that names the field.
type Field struct {
	Name     string
	Type     string
	Desc     string
	Required bool
	// Nullable accepts JSON null as a distinct value (e.g. expected_sha256).
	Nullable bool
	Enum     []string
	// Min and Max bound integers and numbers, and array lengths.
	Min, Max *float64
	// Items describes array elements.
	Items *Field
	// Fields, for objects, is the strict set of keys; nil means a free-form
	// object whose values must be of type Values (when set).
	Fields []Field
	Values string
	// OrRef accepts, instead of a value, an exact future reference
	// {"$future": index-or-id, "$path": "result.field"} (scatter items);
	// it is advertised as a nested anyOf of the type and the reference.
	OrRef bool
}

// refSchema is the advertised shape of a future reference, kept minimal
// because run.scatter repeats it beside every field of every kind: the
// scatter's calls description spells out the exact form, and Decode holds
// a reference to it (exactly $future and $path). A shared $defs/$ref would
// be shorter still, but several MCP clients drop $defs or fail to resolve
// a $ref, so the advertised schema stays self-contained.
var refSchema = map[string]any{
	"type":     "object",
	"required": []string{"$future"},
}

// withRef returns f, or a copy of it accepting future references when the
// enclosing field does (a reference may stand for any nested value).
func withRef(f *Field, orRef bool) *Field {
	if !orRef || f.OrRef {
		return f
	}
	c := *f
	c.OrRef = true
	return &c
}

// hasFutureKey reports whether raw is an object with a top-level "$future"
// key (a reference, well formed or not).
func hasFutureKey(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, ok := m["$future"]
	return ok
}

// isRef reports whether raw is an exact future reference object.
func isRef(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	f, ok := m["$future"]
	if !ok {
		return false
	}
	for k := range m {
		if k != "$future" && k != "$path" {
			return false
		}
	}
	var n float64
	var id string
	if json.Unmarshal(f, &n) != nil && json.Unmarshal(f, &id) != nil {
		return false
	}
	if p, ok := m["$path"]; ok {
		var path string
		if json.Unmarshal(p, &path) != nil {
			return false
		}
	}
	return true
}

// MaxInteger is the largest integer magnitude a field accepts (2^53-1,
// the largest a JSON number carries exactly).
const MaxInteger = 1<<53 - 1

// Bound returns a pointer for Field.Min/Max literals.
func Bound(v float64) *float64 { return &v }

// ValidationError names what was wrong with the input.
type ValidationError struct {
	Tool, Operation, Field, Msg string
}

func (e *ValidationError) Error() string {
	where := e.Tool
	if e.Operation != "" {
		where += "." + e.Operation
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", where, e.Msg)
	}
	return fmt.Sprintf("%s: field %q: %s", where, e.Field, e.Msg)
}

// member is one member of a call's input: its key and its value.
type member struct {
	key string
	val json.RawMessage
}

// ValidateObject checks decoded top-level input fields against the spec.
func (s *Spec) ValidateObject(obj map[string]json.RawMessage) error {
	return s.validate(mapFields(obj))
}

// inputFields are a call's top-level input members: a decoded map, or
// (split) the members of a split (decodeSplit), checked alike by validate.
// A plain struct, not an interface, so that a split's members stay on the
// stack.
type inputFields struct {
	m     map[string]json.RawMessage
	ms    []member
	split bool
}

func mapFields(m map[string]json.RawMessage) inputFields { return inputFields{m: m} }

func memberFields(ms []member) inputFields { return inputFields{ms: ms, split: true} }

func (f inputFields) get(name string) (json.RawMessage, bool) {
	if !f.split {
		v, ok := f.m[name]
		return v, ok
	}
	for _, x := range f.ms {
		if x.key == name {
			return x.val, true
		}
	}
	return nil, false
}

// each calls fn with every key, in no particular order.
func (f inputFields) each(fn func(key string)) {
	if !f.split {
		for k := range f.m {
			fn(k)
		}
		return
	}
	for _, x := range f.ms {
		fn(x.key)
	}
}

func (s *Spec) validate(obj inputFields) error {
	verr := func(field, format string, a ...any) error {
		return &ValidationError{Tool: s.Tool, Operation: s.Operation, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	if unknown, ok := s.firstUnknown(obj); ok {
		return verr(unknown, "unknown field for operation %q; it accepts: %s", s.Operation, s.fieldNames())
	}
	for _, f := range s.Fields {
		v, ok := obj.get(f.Name)
		if !ok {
			if f.Required {
				return verr(f.Name, "required for operation %q (%s)", s.Operation, f.Desc)
			}
			continue
		}
		if err := checkValue(&f, f.Name, v); err != nil {
			return verr(err.path, "%s", err.msg)
		}
	}
	return nil
}

// firstUnknown is the first key of obj, in sorted order, that names none
// of the spec's fields (ok false when there is none). Every call asks,
// and nearly every call has none: no keys are sorted or copied.
func (s *Spec) firstUnknown(obj inputFields) (first string, ok bool) {
	obj.each(func(k string) {
		if s.field(k) == "" && (!ok || k < first) {
			first, ok = k, true
		}
	})
	return first, ok
}

// field is the name of the spec's field named key, or "" when it has none
// (the name, not key, so that a caller holding key's bytes copies nothing).
func (s *Spec) field(key string) string {
	for i := range s.Fields {
		if s.Fields[i].Name == key {
			return s.Fields[i].Name
		}
	}
	return ""
}

type valueError struct{ path, msg string }

func checkValue(f *Field, path string, raw json.RawMessage) *valueError {
	raw = bytes.TrimSpace(raw)
	if f.OrRef && len(raw) > 0 && raw[0] == '{' && hasFutureKey(raw) {
		if isRef(raw) {
			return nil
		}
		return &valueError{path, `a future reference must be exactly {"$future": index-or-future-id, "$path": "result.field"}`}
	}
	if bytes.Equal(raw, []byte("null")) {
		if f.Nullable {
			return nil
		}
		return &valueError{path, fmt.Sprintf("must be %s, not null", typeText(f))}
	}
	switch f.Type {
	case TString:
		s, err := jsonx.Unquote(raw)
		if err != nil {
			return &valueError{path, "must be a string"}
		}
		if len(f.Enum) > 0 && !contains(f.Enum, s) {
			return &valueError{path, fmt.Sprintf("%q is not one of %s", s, strings.Join(f.Enum, ", "))}
		}
	case TInteger, TNumber:
		var n float64
		if json.Unmarshal(raw, &n) != nil {
			return &valueError{path, "must be " + typeText(f)}
		}
		if f.Type == TInteger && (n != math.Trunc(n) || math.IsInf(n, 0)) {
			return &valueError{path, "must be an integer"}
		}
		// Integers are decoded into int64: beyond what a float64 holds
		// exactly they are refused with the range, not a decoder message.
		if f.Type == TInteger && (n > MaxInteger || n < -MaxInteger) {
			lo, hi := float64(-MaxInteger), float64(MaxInteger)
			if f.Min != nil {
				lo = *f.Min
			}
			if f.Max != nil {
				hi = *f.Max
			}
			return &valueError{path, fmt.Sprintf("must be an integer from %.0f to %.0f", lo, hi)}
		}
		if f.Min != nil && n < *f.Min {
			return &valueError{path, fmt.Sprintf("must be at least %v", *f.Min)}
		}
		if f.Max != nil && n > *f.Max {
			return &valueError{path, fmt.Sprintf("must be at most %v", *f.Max)}
		}
	case TBoolean:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return &valueError{path, "must be true or false"}
		}
	case TArray:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return &valueError{path, "must be an array"}
		}
		if f.Min != nil && float64(len(items)) < *f.Min {
			return &valueError{path, fmt.Sprintf("must have at least %v items", *f.Min)}
		}
		if f.Max != nil && float64(len(items)) > *f.Max {
			return &valueError{path, fmt.Sprintf("must have at most %v items", *f.Max)}
		}
		if f.Items != nil {
			itemSpec := withRef(f.Items, f.OrRef)
			for i, it := range items {
				if err := checkValue(itemSpec, fmt.Sprintf("%s[%d]", path, i), it); err != nil {
					return err
				}
			}
		}
	case TObject:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			return &valueError{path, "must be an object"}
		}
		if f.Fields != nil {
			known := map[string]*Field{}
			for i := range f.Fields {
				known[f.Fields[i].Name] = &f.Fields[i]
			}
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if known[k] == nil {
					names := make([]string, 0, len(f.Fields))
					for _, sf := range f.Fields {
						names = append(names, sf.Name)
					}
					return &valueError{path + "." + k, "unknown key; accepted keys: " + strings.Join(names, ", ")}
				}
			}
			for i := range f.Fields {
				sf := withRef(&f.Fields[i], f.OrRef)
				v, ok := obj[sf.Name]
				if !ok {
					if sf.Required {
						return &valueError{path + "." + sf.Name, "required"}
					}
					continue
				}
				if err := checkValue(sf, path+"."+sf.Name, v); err != nil {
					return err
				}
			}
		} else if f.Values != "" {
			for k, v := range obj {
				if err := checkValue(&Field{Type: f.Values, OrRef: f.OrRef}, path+"."+k, v); err != nil {
					return err
				}
			}
		}
	default:
		// Any JSON value.
	}
	return nil
}

func typeText(f *Field) string {
	switch f.Type {
	case TInteger:
		return "an integer"
	case TNumber:
		return "a number"
	case TArray:
		return "an array"
	case TObject:
		return "an object"
	case TBoolean:
		return "true or false"
	case TString:
		return "a string"
	}
	return "a JSON value"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
