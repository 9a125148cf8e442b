package jsonx

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestRewriteTree(t *testing.T) {
	in := map[string]any{
		"b":    []any{"x", map[string]any{"ref": "r1"}, 3.0},
		"a":    "y",
		"keep": map[string]any{"ref": "r2", "n": nil},
	}
	var seen []string
	out, err := RewriteTree(in, "", func(at string, v any) (any, bool, error) {
		seen = append(seen, at)
		switch t := v.(type) {
		case string:
			return strings.ToUpper(t), true, nil
		case map[string]any:
			if r, ok := t["ref"].(string); ok && at != "keep" {
				return "resolved:" + r, true, nil
			}
		}
		return nil, false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"b":    []any{"X", "resolved:r1", 3.0},
		"a":    "Y",
		"keep": map[string]any{"ref": "R2", "n": nil},
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("RewriteTree = %#v, want %#v", out, want)
	}
	// Parents before children, map keys sorted; a replaced node's children
	// are not visited.
	wantSeen := []string{"", "a", "b", "b[0]", "b[1]", "b[2]", "keep", "keep.n", "keep.ref"}
	if !reflect.DeepEqual(seen, wantSeen) {
		t.Fatalf("visited %q, want %q", seen, wantSeen)
	}
	// The input is not modified.
	if in["a"] != "y" || in["b"].([]any)[0] != "x" {
		t.Fatalf("the input changed: %#v", in)
	}
}

func TestRewriteTreeError(t *testing.T) {
	boom := errors.New("boom")
	in := map[string]any{"z": []any{1.0, "bad"}, "a": "bad"}
	var at string
	_, err := RewriteTree(in, "input", func(pos string, v any) (any, bool, error) {
		if v == "bad" {
			at = pos
			return nil, false, boom
		}
		return nil, false, nil
	})
	// The first error in sorted key order stops the walk.
	if !errors.Is(err, boom) || at != "input.a" {
		t.Fatalf("err %v at %q, want boom at input.a", err, at)
	}
}

func TestGetPath(t *testing.T) {
	v := map[string]any{"result": map[string]any{"list": []any{"a", map[string]any{"x": 1.0}}, "s": "str"}}
	for path, want := range map[string]any{
		"result.list.0":   "a",
		"result.list.1.x": 1.0,
		"result.s":        "str",
		"result.list.2":   nil,
		"result.list.-1":  nil,
		"result.list.z":   nil,
		"result.s.x":      nil,
		"nope":            nil,
	} {
		if got := GetPath(v, path); got != want {
			t.Errorf("GetPath(%q) = %v, want %v", path, got, want)
		}
	}
}
