// Decoding a tool call's arguments: the operation picked, the fields
// checked strictly against the primitive's spec.

package primitive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// Decode checks a tool call's arguments strictly and returns the primitive,
// the input with operation and detach removed, and the detach flag.
func (r *Registry) Decode(tool string, args json.RawMessage) (*Spec, json.RawMessage, bool, error) {
	return r.decode(tool, args, json.Valid(args))
}

// DecodeValid is Decode of arguments known to be valid JSON or empty (a
// value of a request body that was checked whole): they are not checked
// again.
func (r *Registry) DecodeValid(tool string, args json.RawMessage) (*Spec, json.RawMessage, bool, error) {
	return r.decode(tool, args, true)
}

func (r *Registry) decode(tool string, args json.RawMessage, valid bool) (*Spec, json.RawMessage, bool, error) {
	if valid {
		if spec, input, detach, err, ok := r.decodeSplit(tool, args); ok {
			return spec, input, detach, err
		}
	}
	return r.decodeMap(tool, args, valid)
}

// decodeMap is decode through a map of the arguments' members, for what
// decodeSplit does not read (and, in tests, to hold it to).
func (r *Registry) decodeMap(tool string, args json.RawMessage, valid bool) (*Spec, json.RawMessage, bool, error) {
	var obj map[string]json.RawMessage
	split := false
	if valid {
		obj, split = splitValid(args)
	}
	if len(bytes.TrimSpace(args)) == 0 {
		obj = map[string]json.RawMessage{}
	} else if !split {
		obj = nil
		if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
			return nil, nil, false, &ValidationError{Tool: tool, Msg: "arguments must be a JSON object"}
		}
	}
	opRaw, hasOp := obj["operation"]
	d, hasDetach := obj["detach"]
	spec, detach, err := r.operation(tool, opRaw, hasOp, d, hasDetach)
	if err != nil {
		return nil, nil, false, err
	}
	delete(obj, "operation")
	delete(obj, "detach")
	if err := spec.ValidateObject(obj); err != nil {
		return nil, nil, false, err
	}
	input, ok := compactMembers(obj)
	if !ok {
		var err error
		if input, err = json.Marshal(obj); err != nil {
			return nil, nil, false, err
		}
	}
	return spec, input, detach, nil
}

// operation is the spec a call's operation member names, and its detach
// member's value.
func (r *Registry) operation(tool string, opRaw json.RawMessage, hasOp bool, d json.RawMessage, hasDetach bool) (*Spec, bool, error) {
	if !hasOp {
		return nil, false, &ValidationError{Tool: tool, Field: "operation", Msg: fmt.Sprintf("required; one of %s", strings.Join(r.OperationNames(tool), ", "))}
	}
	op, err := jsonx.Unquote(opRaw)
	if err != nil {
		return nil, false, &ValidationError{Tool: tool, Field: "operation", Msg: "must be a string"}
	}
	spec, ok := r.Lookup(tool + "." + op)
	if !ok {
		return nil, false, &ValidationError{Tool: tool, Field: "operation", Msg: fmt.Sprintf("unknown operation %q; one of %s", op, strings.Join(r.OperationNames(tool), ", "))}
	}
	if !hasDetach {
		return spec, false, nil
	}
	switch string(d) {
	case "true":
		return spec, true, nil
	case "false":
		return spec, false, nil
	}
	// A null would decode as false without an error: refused like every
	// other null.
	var detach bool
	if err := json.Unmarshal(d, &detach); err != nil || bytes.Equal(bytes.TrimSpace(d), []byte("null")) {
		return nil, false, &ValidationError{Tool: tool, Operation: op, Field: "detach", Msg: "must be true or false (null is not accepted; omit the field for false)"}
	}
	return spec, detach, nil
}

// decodeSplit is decode of valid arguments through their members in
// place, without a map: ok is false (and nothing decided) for what it
// does not read, which decodeMap then decodes: not an object, a key with
// an escape, invalid UTF-8 or repeated, more than maxSplit members.
func (r *Registry) decodeSplit(tool string, args []byte) (spec *Spec, input json.RawMessage, detach bool, err error, ok bool) {
	var rawBuf [maxSplit]rawMember
	raw, ok := splitRaw(args, rawBuf[:0])
	if !ok {
		return nil, nil, false, nil, false
	}
	var opRaw, d []byte
	var hasOp, hasDetach bool
	for _, m := range raw {
		switch string(m.key) {
		case "operation":
			opRaw, hasOp = m.val, true
		case "detach":
			d, hasDetach = m.val, true
		}
	}
	if spec, detach, err = r.operation(tool, opRaw, hasOp, d, hasDetach); err != nil {
		return nil, nil, false, err, true
	}
	var restBuf [maxSplit]member
	rest := restBuf[:0]
	for _, m := range raw {
		if k := string(m.key); k == "operation" || k == "detach" {
			continue
		}
		// The spec's own name when it has the field: no copy of the key.
		name := spec.field(string(m.key))
		if name == "" {
			name = string(m.key)
		}
		rest = append(rest, member{name, m.val})
	}
	if err := spec.validate(memberFields(rest)); err != nil {
		return nil, nil, false, err, true
	}
	input, ok = compactSorted(rest)
	if !ok {
		obj := make(map[string]json.RawMessage, len(rest))
		for _, m := range rest {
			obj[m.key] = m.val
		}
		if input, err = json.Marshal(obj); err != nil {
			return nil, nil, false, err, true
		}
	}
	return spec, input, detach, nil, true
}
