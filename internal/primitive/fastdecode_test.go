package primitive

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

type upper string

func (u *upper) UnmarshalText(b []byte) error { *u = upper(strings.ToUpper(string(b))); return nil }

type wide struct {
	Path    string            `json:"path"`
	Limit   int               `json:"limit,omitempty"`
	Small   int8              `json:"small"`
	Expect  *string           `json:"expected_sha256"`
	Flag    bool              `json:"flag"`
	Items   []struct{ A int } `json:"items"`
	Any     any               `json:"any"`
	Raw     json.RawMessage   `json:"raw"`
	Up      upper             `json:"up"`
	Skip    string            `json:"-"`
	Untyped float64           `json:"num"`
	Number  json.Number       `json:"number"`
	hidden  string
}

type untagged struct {
	Path string
}

type plainIn struct {
	Path string `json:"path"`
}

// decodeValues are member values for the differential tests: plain and
// escaped strings, invalid UTF-8, numbers in and out of range, null,
// nested values, and broken ones.
var decodeValues = []string{
	`"a"`, `""`, `"/home/u/notes.txt"`, `"with space"`, `"esc\"aped"`, `"tab\tx"`, `"\u00e9"`, "\"\xff\xfe\"", `"é"`,
	`"<b>&"`, "\"\u2028\"", `"\ud800"`, `0`, `1`, `-5`, `300`, `1.5`, `1e3`, `true`, `false`, `null`,
	`[]`, `[{"A":1}]`, `[{"A":"x"}]`, `{"x":[1,{"y":"}"}]}`, `{}`, `"unterminated`, `tru`, `[1,]`, `"a"x`, `{"a":1`,
}

var decodeKeys = []string{"path", "limit", "small", "expected_sha256", "flag", "items", "any", "raw", "up", "-", "num", "number", "hidden", "Path", "PATH", "unknown", `pa\u0074h`}

// TestDecodeInputMatchesEncodingJSON: decodeInput (the direct reading of
// flat objects) answers exactly what json.Unmarshal answers, value and
// error, for every one-member object of the keys and values above, and
// for random objects of several members, in three struct shapes.
func TestDecodeInputMatchesEncodingJSON(t *testing.T) {
	var inputs []string
	for _, k := range decodeKeys {
		for _, v := range decodeValues {
			inputs = append(inputs, `{"`+k+`":`+v+`}`)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := 1 + rng.IntN(4)
		var b strings.Builder
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + decodeKeys[rng.IntN(len(decodeKeys))] + `":` + decodeValues[rng.IntN(len(decodeValues))])
		}
		b.WriteByte('}')
		inputs = append(inputs, b.String())
	}
	inputs = append(inputs, `{}`, `{"path":"a"} `, ` {"path":"a"}`, `{"path":"a",}`, `{"path":"a"}x`, `{"path" :"a"}`, `{"path":"a","path":"b"}`, `{`, `}`, `[]`, `null`, `"s"`)
	for _, in := range inputs {
		compareDecode[wide](t, in)
		compareDecode[untagged](t, in)
		compareDecode[plainIn](t, in)
	}
}

func compareDecode[I any](t *testing.T, in string) {
	t.Helper()
	plan := planFor(reflect.TypeFor[I]())
	var got, want I
	gerr := decodeInput([]byte(in), plan, &got)
	werr := json.Unmarshal([]byte(in), &want)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(got, want) {
		t.Fatalf("%T from %s: got %+v (%v), want %+v (%v)", got, in, got, gerr, want, werr)
	}
}

// TestPlanFor: the types the direct reading refuses.
func TestPlanFor(t *testing.T) {
	type embedded struct{ plainIn }
	type opt struct {
		N int `json:"n,string"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[untagged](), reflect.TypeFor[embedded](), reflect.TypeFor[opt](), reflect.TypeFor[string](), reflect.TypeFor[map[string]any]()} {
		if planFor(typ) != nil {
			t.Errorf("%v: planned", typ)
		}
	}
	if planFor(reflect.TypeFor[wide]()) == nil || planFor(reflect.TypeFor[plainIn]()) == nil {
		t.Fatal("plain structs not planned")
	}
	// The direct reading does read what it is for.
	var w wide
	if !decodeFlat([]byte(`{"expected_sha256":null,"flag":true,"items":[{"A":1}],"num":2,"path":"/a b","up":"x"}`), planFor(reflect.TypeFor[wide]()), reflect.ValueOf(&w).Elem()) ||
		w.Path != "/a b" || !w.Flag || w.Untyped != 2 || len(w.Items) != 1 || w.Up != "X" {
		t.Fatalf("a plain flat object was not read directly: %+v", w)
	}
}

// TestCompactMembersMatchesMarshal: where compactMembers writes an
// object, it is byte for byte json.Marshal's.
func TestCompactMembersMatchesMarshal(t *testing.T) {
	vals := []string{`"a"`, `"with space"`, `"esc\"aped"`, `"<b>"`, `"a&b"`, "\"\u2028\"", "\"\u2029\"", `"é"`, `1`, `[1, 2]`, `[1,2]`, `{"a": 1}`, `{"a":"\\"}`, `null`, `true`}
	keys := []string{"path", "limit", "a<b", "é", "expected_sha256"}
	rng := rand.New(rand.NewPCG(3, 4))
	wrote := 0
	for range 5000 {
		obj := map[string]json.RawMessage{}
		for range rng.IntN(4) {
			obj[keys[rng.IntN(len(keys))]] = json.RawMessage(vals[rng.IntN(len(vals))])
		}
		want, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := compactMembers(obj)
		if ok {
			wrote++
			if string(got) != string(want) {
				t.Fatalf("%v: wrote %s, json.Marshal %s", obj, got, want)
			}
		}
	}
	if wrote == 0 {
		t.Fatal("compactMembers never wrote an object")
	}
}

// TestSplitObjectMatchesUnmarshal: where splitObject splits, its members
// are json.Unmarshal's (into a map of raw values), and it splits nothing
// json.Unmarshal refuses.
func TestSplitObjectMatchesUnmarshal(t *testing.T) {
	spaces := []string{"", " ", "\n\t", "\r\n  "}
	rng := rand.New(rand.NewPCG(5, 6))
	inputs := []string{`{}`, ` { } `, `null`, `[]`, `"s"`, `1`, `{"a":1,"a":2}`, `{"a\u0062":1}`, "{\"\xff\":1}", `{"a":1,}`, `{"a" 1}`, `{"a":1} x`, `{"a":[1, {"b" : "}"}] , "c":"\""}`, `{"a":tru}`, `{"a":1`}
	for range 20000 {
		sp := func() string { return spaces[rng.IntN(len(spaces))] }
		var b strings.Builder
		b.WriteString(sp() + "{")
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteString(sp() + ",")
			}
			b.WriteString(sp() + `"` + decodeKeys[rng.IntN(len(decodeKeys))] + `"` + sp() + ":" + sp() + decodeValues[rng.IntN(len(decodeValues))])
		}
		b.WriteString(sp() + "}" + sp())
		inputs = append(inputs, b.String())
	}
	split := 0
	for _, in := range inputs {
		got, ok := splitObject([]byte(in))
		var want map[string]json.RawMessage
		err := json.Unmarshal([]byte(in), &want)
		if json.Valid([]byte(in)) {
			// What the walk alone makes of valid JSON.
			if vgot, vok := splitValid([]byte(in)); vok != ok || ok && !reflect.DeepEqual(vgot, got) {
				t.Fatalf("%q: splitValid %q %v, splitObject %q %v", in, vgot, vok, got, ok)
			}
		}
		if !ok {
			continue
		}
		split++
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: split %q, json.Unmarshal %q (%v)", in, got, want, err)
		}
	}
	if split < 1000 {
		t.Fatalf("split only %d of %d objects", split, len(inputs))
	}
}
