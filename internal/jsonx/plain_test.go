package jsonx

import (
	"encoding/json"
	"fmt"
	"testing"
)

// plainInputs are JSON texts (and broken ones) for the plain helpers:
// tricky's strings as Marshal writes them and as they are between quotes,
// escapes, numbers, literals, arrays and objects with and without space.
func plainInputs() []string {
	in := []string{`""`, `"a"`, `"esc\"aped"`, `"\u00e9"`, `"\ud800"`, `"a\/b"`, `"unterminated`, `"a"x`, `x"a"`, `"`, ``,
		`1`, `-1.5e3`, `true`, `null`, `[]`, `[1,2]`, `[1, 2]`, `{"a":1}`, `{"a": 1}`, "{\"a\":\n1}", `{"a":"<b>"}`, `["x y"]`,
		`"\u2028"`, "\"\u2028\"", `"a&b"`, `["\\"]`, `["\""]`, `"\\" `}
	for _, s := range tricky {
		b, err := json.Marshal(s)
		if err != nil {
			panic(err)
		}
		in = append(in, string(b), `"`+s+`"`, `[`+string(b)+`, 1]`, `{"k":`+string(b)+`}`)
	}
	return in
}

// TestPlainStringAndUnquoteMatchUnmarshal: what PlainString reads directly
// is what json.Unmarshal decodes, and Unquote answers json.Unmarshal's
// value and error for every input.
func TestPlainStringAndUnquoteMatchUnmarshal(t *testing.T) {
	plain := 0
	for _, in := range plainInputs() {
		var want string
		werr := json.Unmarshal([]byte(in), &want)
		if got, ok := PlainString([]byte(in)); ok {
			plain++
			if werr != nil || got != want {
				t.Errorf("PlainString(%q) = %q, json.Unmarshal %q (%v)", in, got, want, werr)
			}
		}
		got, err := Unquote([]byte(in))
		if fmt.Sprint(err) != fmt.Sprint(werr) || werr == nil && got != want {
			t.Errorf("Unquote(%q) = %q (%v), json.Unmarshal %q (%v)", in, got, err, want, werr)
		}
	}
	if plain == 0 {
		t.Fatal("PlainString never read a string directly")
	}
}

// TestPlainKeyAndCompactValueMatchMarshal: a key PlainKey accepts is
// written by json.Marshal as it is between quotes, and a valid value
// CompactValue accepts is written by json.Marshal unchanged.
func TestPlainKeyAndCompactValueMatchMarshal(t *testing.T) {
	keys, values := 0, 0
	for _, s := range append(tricky, "path", "expected_sha256", "a-b.c", "é") {
		if PlainKey(s) {
			keys++
			if b, err := json.Marshal(s); err != nil || string(b) != `"`+s+`"` {
				t.Errorf("PlainKey(%q) is true, json.Marshal writes %s (%v)", s, b, err)
			}
		}
	}
	for _, in := range plainInputs() {
		if !json.Valid([]byte(in)) || !CompactValue([]byte(in)) {
			continue
		}
		values++
		if b, err := json.Marshal(json.RawMessage(in)); err != nil || string(b) != in {
			t.Errorf("CompactValue(%q) is true, json.Marshal writes %s (%v)", in, b, err)
		}
	}
	if keys == 0 || values == 0 {
		t.Fatalf("PlainKey accepted %d keys, CompactValue %d values: the test proves nothing", keys, values)
	}
	for _, s := range []string{"a<b", "\x01", "é", `"`} {
		if PlainKey(s) {
			t.Errorf("PlainKey(%q) is true; json.Marshal escapes it", s)
		}
	}
	for _, v := range []string{`[1, 2]`, `"<b>"`, "\"\u2028\"", `{"a": 1}`} {
		if CompactValue([]byte(v)) {
			t.Errorf("CompactValue(%q) is true; json.Marshal rewrites it", v)
		}
	}
}
