package primitive

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func testRegistry(t *testing.T) *Registry {
	noop := func(context.Context, *Call, json.RawMessage) (any, error) { return nil, nil }
	r, err := NewRegistry(
		&Spec{Tool: "t", Operation: "a", Risk: RiskRead, Run: noop, Fields: []Field{
			{Name: "path", Type: TString, Required: true, Desc: "p"},
			{Name: "n", Type: TInteger, Min: Bound(1), Max: Bound(5)},
			{Name: "sha", Type: TString, Nullable: true},
		}},
		&Spec{Tool: "t", Operation: "b", Risk: RiskWrite, Run: noop, Fields: []Field{
			{Name: "path", Type: TString},
			{Name: "items", Type: TArray, Max: Bound(2), Items: &Field{Type: TObject, Fields: []Field{{Name: "old", Type: TString, Required: true}}}},
			{Name: "env", Type: TObject, Values: TString},
			{Name: "mode", Type: TString, Enum: []string{"x", "y"}},
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDecode(t *testing.T) {
	r := testRegistry(t)
	cases := []struct {
		args string
		want string // "" = ok
	}{
		{`{"operation":"a","path":"/x"}`, ""},
		{`{"operation":"a","path":"/x","sha":null,"detach":true}`, ""},
		{`{"operation":"a"}`, `t.a: field "path": required`},
		{`{"operation":"a","path":"/x","items":[]}`, `t.a: field "items": unknown field for operation "a"`},
		// Of several unknown fields the first in sorted order is named; an
		// empty key is a field like any other.
		{`{"operation":"a","zz":1,"path":"/x","bb":2,"cc":3}`, `t.a: field "bb": unknown field`},
		{`{"operation":"a","path":"/x","":1}`, `t.a: unknown field for operation "a"`},
		{`{"operation":"a","path":1}`, `field "path": must be a string`},
		{`{"operation":"a","path":"/x","n":1.5}`, `field "n": must be an integer`},
		{`{"operation":"a","path":"/x","n":9}`, `field "n": must be at most 5`},
		{`{"operation":"a","path":null}`, `field "path": must be a string, not null`},
		{`{"operation":"b","items":[{"old":"a"},{"old":"b"},{"old":"c"}]}`, `"items": must have at most 2 items`},
		{`{"operation":"b","items":[{"old":"a","new":1}]}`, `"items[0].new": unknown key`},
		{`{"operation":"b","items":[{}]}`, `"items[0].old": required`},
		{`{"operation":"b","env":{"A":1}}`, `"env.A": must be a string`},
		{`{"operation":"b","mode":"z"}`, `"mode": "z" is not one of x, y`},
		{`{"operation":"c"}`, `unknown operation "c"; one of a, b`},
		{`{"path":"/x"}`, `field "operation": required`},
		{`[1]`, `arguments must be a JSON object`},
		{`{"operation":"a","path":"/x","detach":1}`, `field "detach"`},
		{` {"operation" : "a", "path":"/x"} `, ""},
		{``, `field "operation": required`},
		{`null`, `arguments must be a JSON object`},
		{`{"operation":"a","path":"/x","path":"/y"}`, ""},
		{`{"operation":"a","path":"/x"}`, ""},
	}
	for _, tc := range cases {
		spec, input, _, err := r.Decode("t", json.RawMessage(tc.args))
		// DecodeValid, for arguments known valid, answers the same.
		vspec, vinput, _, verr := r.DecodeValid("t", json.RawMessage(tc.args))
		if vspec != spec || string(vinput) != string(input) || fmt.Sprint(verr) != fmt.Sprint(err) {
			t.Errorf("%s: DecodeValid %v %s %v, Decode %v %s %v", tc.args, vspec, vinput, verr, spec, input, err)
		}
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.args, err)
			} else if strings.Contains(string(input), "operation") || strings.Contains(string(input), "detach") || spec.Operation == "" {
				t.Errorf("%s: input %s keeps transport fields", tc.args, input)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestToolSchemaIsFlat(t *testing.T) {
	r := testRegistry(t)
	s := r.ToolSchema("t")
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if _, ok := s[k]; ok {
			t.Fatalf("top-level %s", k)
		}
	}
	props := s["properties"].(map[string]any)
	if d := props["path"].(map[string]any)["description"].(string); !strings.HasPrefix(d, "(a, b)") {
		t.Errorf("path description should name its operations: %q", d)
	}
	if _, ok := props["detach"]; !ok {
		t.Error("detach missing")
	}
	if s["additionalProperties"] != false {
		t.Error("additionalProperties must be false")
	}
}

func TestRegistryRefusesDuplicates(t *testing.T) {
	noop := func(context.Context, *Call, json.RawMessage) (any, error) { return nil, nil }
	if _, err := NewRegistry(&Spec{Tool: "t", Operation: "a", Risk: RiskRead, Run: noop}, &Spec{Tool: "t", Operation: "a", Risk: RiskRead, Run: noop}); err == nil {
		t.Error("duplicate primitive accepted")
	}
	if _, err := NewRegistry(&Spec{Tool: "t", Operation: "a", Risk: RiskRead, Run: noop, Fields: []Field{{Name: "detach", Type: TBoolean}}}); err == nil {
		t.Error("reserved field accepted")
	}
	if _, err := NewRegistry(
		&Spec{Tool: "t", Operation: "a", Risk: RiskRead, Run: noop, Fields: []Field{{Name: "x", Type: TString}}},
		&Spec{Tool: "t", Operation: "b", Risk: RiskRead, Run: noop, Fields: []Field{{Name: "x", Type: TInteger}}}); err == nil {
		t.Error("a field with two types in one tool accepted (the flat schema could not describe it)")
	}
}

func TestOrRefAcceptsExactReferences(t *testing.T) {
	f := &Field{Name: "args", Type: TArray, Items: &Field{Type: TString}, OrRef: true}
	ok := []string{`["a"]`, `{"$future":0,"$path":"result.x"}`, `["a",{"$future":"fut_x"}]`}
	bad := map[string]string{
		`[1]`:                           "must be a string",
		`{"$future":0,"x":1}`:           "exactly",
		`{"$future":true}`:              "exactly",
		`["a",{"$future":0,"$path":2}]`: "exactly",
	}
	for _, v := range ok {
		if err := checkValue(f, "args", json.RawMessage(v)); err != nil {
			t.Errorf("%s: %v", v, err.msg)
		}
	}
	for v, want := range bad {
		if err := checkValue(f, "args", json.RawMessage(v)); err == nil || !strings.Contains(err.msg, want) {
			t.Errorf("%s: got %v, want %q", v, err, want)
		}
	}
	sch := f.JSONSchema()
	if _, ok := sch["anyOf"]; !ok {
		t.Fatalf("an OrRef field is advertised as anyOf: %v", sch)
	}
}

func TestOrRefLeavesNestedReferencesInFreeObjects(t *testing.T) {
	f := &Field{Name: "params", Type: TObject, OrRef: true}
	if err := checkValue(f, "params", json.RawMessage(`{"x":{"$future":0,"$path":"result.y"}}`)); err != nil {
		t.Fatalf("a reference nested in a free-form object is resolved later, not refused: %v", err.msg)
	}
}

// TestDecodeSplitMatchesDecodeMap: decoding valid arguments through their
// members in place gives what decoding through a map gives (spec, input,
// detach, error), for random objects of the test registry's fields, the
// transport fields and unknown ones, with values of every kind.
func TestDecodeSplitMatchesDecodeMap(t *testing.T) {
	r := testRegistry(t)
	keys := []string{"operation", "operation", "detach", "path", "n", "sha", "items", "env", "mode", "", "zz", "bb", "Path", `pa\u0074h`, "é"}
	values := []string{`"a"`, `"b"`, `"c"`, `"/x"`, `1`, `3`, `9`, `1.5`, `null`, `true`, `false`, `"x"`, `"z"`, `[]`, `[{"old":"a"}]`, `[{"old":"a"},{"old":"b"},{"old":"c"}]`,
		`[{"new":1}]`, `{"A":"1"}`, `{"A":1}`, `"\u003c"`, `"<"`, `"a\u2028"`, `{"a": 1}`, `[1, 2]`, `"\ud800"`, `-0`, `1e2`}
	rng := rand.New(rand.NewPCG(7, 8))
	inputs := []string{`{}`, `{"operation":"a","path":"/x"}`, ` {"operation" : "a", "path":"/x"} `, `[1]`, `null`, `"s"`, `{"operation":"a","path":"/x","path":"/y"}`}
	for range 30000 {
		var b strings.Builder
		b.WriteString("{")
		if rng.IntN(4) > 0 {
			b.WriteString(`"operation":` + values[rng.IntN(3)])
		}
		for i := range rng.IntN(5) {
			if i > 0 || b.Len() > 1 {
				b.WriteString(",")
			}
			b.WriteString(`"` + keys[rng.IntN(len(keys))] + `":` + values[rng.IntN(len(values))])
		}
		b.WriteString("}")
		inputs = append(inputs, b.String())
	}
	split := 0
	for _, in := range inputs {
		if !json.Valid([]byte(in)) {
			t.Fatalf("generated invalid JSON %s", in)
		}
		spec, input, detach, err, ok := r.decodeSplit("t", []byte(in))
		if !ok {
			continue
		}
		split++
		mspec, minput, mdetach, merr := r.decodeMap("t", json.RawMessage(in), true)
		if spec != mspec || string(input) != string(minput) || detach != mdetach || fmt.Sprint(err) != fmt.Sprint(merr) {
			t.Fatalf("%s: split %v %s %v %v; map %v %s %v %v", in, spec, input, detach, err, mspec, minput, mdetach, merr)
		}
	}
	if split < 10000 {
		t.Fatalf("split only %d of %d inputs", split, len(inputs))
	}
}
