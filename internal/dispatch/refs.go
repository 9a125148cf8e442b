package dispatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// This file holds the reference objects of dependent futures (deps.go):
//
//	{"$future": "<future id>", "$path": "result.field"}
//
// how they are found and checked in an input (MapRefs) and how a path is
// looked up in a dependency's decoded envelope (Lookup).

// MaxRefResultBytes bounds a spilled dependency result read back from its
// artifact to resolve a reference.
const MaxRefResultBytes = 16 << 20

// Ref is an exact future reference: Future is a future id (string) or,
// before a scatter converts it, a batch index (json.Number).
type Ref struct {
	Future any
	Path   string
}

// ID returns the referenced future id, or "" when Future is not a string.
func (r Ref) ID() string { s, _ := r.Future.(string); return s }

// RefError is a malformed reference object at a position of an input.
type RefError struct{ At, Msg string }

func (e *RefError) Error() string { return e.At + ": " + e.Msg }

// DecodeJSON decodes data keeping numbers as json.Number, so that a value
// re-encoded after MapRefs is byte-for-byte the number it was.
func DecodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// MapRefs walks v (decoded by DecodeJSON) and replaces every exact
// reference object by fn's result; at is the position of v ("" for the
// root, then "path", "args[1]", "job.env.X"). An object with a "$future"
// or "$path" key that is not an exact reference is a *RefError.
func MapRefs(v any, at string, fn func(at string, r Ref) (any, error)) (any, error) {
	return jsonx.RewriteTree(v, at, func(at string, v any) (any, bool, error) {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		_, hasF := m["$future"]
		_, hasP := m["$path"]
		if !hasF && !hasP {
			return nil, false, nil
		}
		r, err := parseRef(m, at)
		if err != nil {
			return nil, false, err
		}
		out, err := fn(at, r)
		return out, true, err
	})
}

func parseRef(m map[string]any, at string) (Ref, error) {
	bad := func(msg string) (Ref, error) {
		if at == "" {
			at = "input"
		}
		return Ref{}, &RefError{At: at, Msg: msg + `; a future reference is exactly {"$future": index-or-future-id, "$path": "result.field"}`}
	}
	if len(m) != 2 {
		return bad("a future reference has exactly the keys $future and $path")
	}
	p, ok := m["$path"].(string)
	if !ok {
		return bad("$path must be a string")
	}
	if err := checkPath(p); err != nil {
		return bad(err.Error())
	}
	switch f := m["$future"].(type) {
	case string:
		if f == "" {
			return bad("$future must not be empty")
		}
		return Ref{Future: f, Path: p}, nil
	case json.Number:
		return Ref{Future: f, Path: p}, nil
	case float64:
		return Ref{Future: json.Number(strconv.FormatFloat(f, 'f', -1, 64)), Path: p}, nil
	}
	return bad("$future must be a batch index or a future id")
}

func checkPath(p string) error {
	if p == "" {
		return errors.New("$path must not be empty")
	}
	for _, seg := range strings.Split(p, ".") {
		if seg == "" {
			return fmt.Errorf("$path %q has an empty segment", p)
		}
	}
	return nil
}

// Lookup returns the value at a dotted path in decoded JSON (numeric
// segments index arrays).
func Lookup(v any, path string) (any, bool) {
	for _, seg := range strings.Split(path, ".") {
		switch t := v.(type) {
		case map[string]any:
			nv, ok := t[seg]
			if !ok {
				return nil, false
			}
			v = nv
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			v = t[i]
		default:
			return nil, false
		}
	}
	return v, true
}
