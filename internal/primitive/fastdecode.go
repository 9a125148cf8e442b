package primitive

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// The input a primitive runs on is the compact, key-sorted object
// Registry.Decode built from arguments it already parsed and validated.
// Decoding that object again with encoding/json (and, before it, the
// string fields the validation had already read) cost more than the rest
// of a cheap read call's dispatch, so the plain cases are read directly:
// a flat object of plain members into a struct whose fields are plainly
// tagged. Anything else, and anything this reading does not accept
// exactly, is decoded by encoding/json from the start, so every answer and
// every error stays what encoding/json gives.

// compactMembers writes the object of obj's members sorted by key, as
// json.Marshal of obj writes it, when every key and value needs no
// rewriting (keys of plain ASCII, values without whitespace outside
// strings or a character json.Marshal escapes); it reports false
// otherwise, having written nothing.
func compactMembers(obj map[string]json.RawMessage) ([]byte, bool) {
	ms := make([]member, 0, len(obj))
	for k, v := range obj {
		ms = append(ms, member{k, v})
	}
	return compactSorted(ms)
}

// compactSorted is compactMembers of the members ms (distinct keys),
// which it sorts in place.
func compactSorted(ms []member) ([]byte, bool) {
	n := 2
	for _, m := range ms {
		if !jsonx.PlainKey(m.key) || !jsonx.CompactValue(m.val) {
			return nil, false
		}
		n += len(m.key) + len(m.val) + 4
	}
	slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, m.key...)
		b = append(b, '"', ':')
		b = append(b, m.val...)
	}
	return append(b, '}'), true
}

// fieldPlan maps a struct type's JSON member names to its fields, for
// decodeFlat; nil for a type decodeFlat does not read (not a struct, or
// one with embedded fields or tag options other than omitempty/omitzero).
type fieldPlan map[string]fieldSlot

type fieldSlot struct {
	index int
	kind  reflect.Kind
	// custom is set when the field's type decodes itself (UnmarshalJSON
	// or UnmarshalText): it is never set directly.
	custom bool
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself reports whether encoding/json hands values of t (or *t) to
// a method of theirs.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) || p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler)
}

func planFor(t reflect.Type) fieldPlan {
	if t.Kind() != reflect.Struct || decodesItself(t) {
		return nil
	}
	plan := fieldPlan{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		tag, ok := f.Tag.Lookup("json")
		if !ok {
			return nil // matched by its Go name, case-insensitively
		}
		name, opts, _ := strings.Cut(tag, ",")
		for o := range strings.SplitSeq(opts, ",") {
			if o != "" && o != "omitempty" && o != "omitzero" {
				return nil
			}
		}
		if name == "-" && opts == "" {
			continue
		}
		if name == "" || !jsonx.PlainKey(name) {
			return nil
		}
		if _, dup := plan[name]; dup {
			return nil
		}
		// json.Number is a string kind that encoding/json fills only
		// with a number literal: decoded as a custom type, not a string.
		custom := decodesItself(f.Type) || f.Type == reflect.TypeFor[json.Number]()
		plan[name] = fieldSlot{index: i, kind: f.Type.Kind(), custom: custom}
	}
	return plan
}

// decodeFlat decodes the compact object raw into *dst (a zero struct) as
// json.Unmarshal would, and reports whether it did; on false, *dst may be
// partly set and the caller decodes with json.Unmarshal into a zero value.
// It reads only `{"key":value,...}` with no whitespace, every key a member
// of plan and none repeated; a plain string or a boolean is set directly,
// any other value by json.Unmarshal into its field.
func decodeFlat(raw []byte, plan fieldPlan, dst reflect.Value) bool {
	if plan == nil || len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return false
	}
	if len(raw) == 2 {
		return true
	}
	rest := raw[1:]
	var seen uint64
	for {
		if len(rest) == 0 || rest[0] != '"' {
			return false
		}
		end := bytes.IndexByte(rest[1:], '"')
		if end < 0 {
			return false
		}
		key := rest[1 : 1+end]
		slot, ok := plan[string(key)]
		if !ok || bytes.IndexByte(key, '\\') >= 0 || slot.index >= 64 || seen&(1<<slot.index) != 0 {
			return false
		}
		seen |= 1 << slot.index
		rest = rest[2+end:]
		if len(rest) == 0 || rest[0] != ':' {
			return false
		}
		rest = rest[1:]
		n := jsonx.ValueEnd(rest, false)
		if n <= 0 || n >= len(rest) {
			return false
		}
		val := rest[:n]
		f := dst.Field(slot.index)
		switch {
		case slot.custom:
			if json.Unmarshal(val, f.Addr().Interface()) != nil {
				return false
			}
		case slot.kind == reflect.String && val[0] == '"':
			s, ok := jsonx.PlainString(val)
			if !ok {
				return false
			}
			f.SetString(s)
		case slot.kind == reflect.Bool && string(val) == "true":
			f.SetBool(true)
		case slot.kind == reflect.Bool && string(val) == "false":
			f.SetBool(false)
		default:
			if json.Unmarshal(val, f.Addr().Interface()) != nil {
				return false
			}
		}
		switch rest[n] {
		case ',':
			rest = rest[n+1:]
		case '}':
			return n+1 == len(rest)
		default:
			return false
		}
	}
}

// decodeInput decodes the input raw into *in as json.Unmarshal does
// (through decodeFlat when plan reads it).
func decodeInput[I any](raw []byte, plan fieldPlan, in *I) error {
	if plan != nil && decodeFlat(raw, plan, reflect.ValueOf(in).Elem()) {
		return nil
	}
	var zero I
	*in = zero
	return json.Unmarshal(raw, in)
}

// splitObject returns the members of the JSON object args as
// json.Unmarshal into a map[string]json.RawMessage returns them, and
// reports whether it could: args must be valid JSON (which it checks),
// an object whose keys have no escape, are valid UTF-8 and are not
// repeated. Otherwise the caller decodes args with json.Unmarshal.
func splitObject(args []byte) (map[string]json.RawMessage, bool) {
	if !json.Valid(args) {
		return nil, false
	}
	return splitValid(args)
}

// rawMember is a member of a split object as its bytes: its key (between
// the quotes) and its value.
type rawMember struct{ key, val []byte }

// maxSplit is how many members decodeSplit reads without a map.
const maxSplit = 16

// splitRaw splits args, valid JSON, into buf's space as splitValid splits
// it into a map, keeping the order; false when splitValid would refuse it
// or buf is full.
func splitRaw(args []byte, buf []rawMember) ([]rawMember, bool) {
	ms := buf[:0]
	for it := jsonx.WalkObject(args); ; {
		if !it.Next() {
			return ms, it.OK()
		}
		key := it.Key()
		if len(ms) == cap(ms) || !utf8.Valid(key) {
			return nil, false
		}
		for _, m := range ms {
			if bytes.Equal(m.key, key) {
				return nil, false
			}
		}
		ms = append(ms, rawMember{key, it.Value()})
	}
}

// splitValid is splitObject of args known to be valid JSON.
func splitValid(args []byte) (map[string]json.RawMessage, bool) {
	obj := make(map[string]json.RawMessage, 4)
	for it := jsonx.WalkObject(args); ; {
		if !it.Next() {
			return obj, it.OK()
		}
		key := it.Key()
		if !utf8.Valid(key) {
			return nil, false
		}
		if _, dup := obj[string(key)]; dup {
			return nil, false
		}
		obj[string(key)] = json.RawMessage(it.Value())
	}
}
