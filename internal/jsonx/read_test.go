package jsonx

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestMembers: the walk yields each member's key and raw value in order,
// through whitespace and nested values, and reads the whole object or
// says it did not.
func TestMembers(t *testing.T) {
	cases := []struct {
		in   string
		keys []string
		vals []string
		ok   bool
	}{
		{`{}`, nil, nil, true},
		{" \t{ }\r\n", nil, nil, true},
		{`{"a":1,"b":"x"}`, []string{"a", "b"}, []string{`1`, `"x"`}, true},
		{`{ "a" : [1, {"b" : "}"}] , "c":"\"" , "d":null }`, []string{"a", "c", "d"}, []string{`[1, {"b" : "}"}]`, `"\""`, `null`}, true},
		{`{"n":-1.5e3,"t":true,"o":{}}`, []string{"n", "t", "o"}, []string{`-1.5e3`, `true`, `{}`}, true},
		{`{"a\u0062":1}`, nil, nil, false}, // an escaped key
		{`{"a":1,"b\"c":2}`, []string{"a"}, []string{`1`}, false},
		{`[]`, nil, nil, false},
		{`"s"`, nil, nil, false},
		{`null`, nil, nil, false},
		{``, nil, nil, false},
		{`{"a":1} {}`, []string{"a"}, []string{`1`}, false}, // two values
	}
	for _, c := range cases {
		var keys, vals []string
		it := WalkObject([]byte(c.in))
		for it.Next() {
			keys, vals = append(keys, string(it.Key())), append(vals, string(it.Value()))
		}
		if !reflect.DeepEqual(keys, c.keys) || !reflect.DeepEqual(vals, c.vals) || it.OK() != c.ok {
			t.Errorf("%q: keys %q, values %q, ok %v; want %q, %q, %v", c.in, keys, vals, it.OK(), c.keys, c.vals, c.ok)
		}
		if it.Next() {
			t.Errorf("%q: Next after the end", c.in)
		}
	}
	// A caller that stops early has not read the whole object.
	it := WalkObject([]byte(`{"a":1,"b":2}`))
	it.Next()
	if it.OK() {
		t.Fatal("OK before the walk ended")
	}
}

// TestValueEnd: where a value of valid JSON ends, and that a compact
// scan of possibly invalid text cannot tell across whitespace.
func TestValueEnd(t *testing.T) {
	for in, want := range map[string]int{
		`"a\"b",`: 6, `{"a":[1,"]"]}x`: 13, `123}`: 3, `true `: 4, `null`: 4, `[1, 2] `: 6, `{}`: 2,
	} {
		if got := ValueEnd([]byte(in), true); got != want {
			t.Errorf("ValueEnd(%q, valid) = %d, want %d", in, got, want)
		}
		var v any
		if json.Unmarshal([]byte(in[:want]), &v) != nil {
			t.Errorf("%q[:%d] is no JSON value", in, want)
		}
	}
	for in, want := range map[string]int{`[1, 2]`: 0, `"a b"`: 5, `{"a":1},`: 7, `tru`: 0, `"open`: 0} {
		if got := ValueEnd([]byte(in), false); got != want {
			t.Errorf("ValueEnd(%q, compact) = %d, want %d", in, got, want)
		}
	}
}

// FuzzValueEnd: a valid JSON value ends where it ends, alone or with what
// may follow it.
func FuzzValueEnd(f *testing.F) {
	for _, s := range []string{`"a\"b"`, `{"a":[1,"]"]}`, `123`, `true`, `null`, `[1, 2]`, `{}`, `"\\"`, `"\\\""`, `"a\\\\\\"b"`, `{"k":"v\\","w":"}"}`, `"é\u00e9"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v := bytes.TrimSpace(data)
		if len(v) == 0 || !json.Valid(v) {
			return
		}
		for _, after := range []string{"", ",", "}", "]", " ", "\n,"} {
			if got := ValueEnd(append(v[:len(v):len(v)], after...), true); got != len(v) {
				t.Fatalf("ValueEnd(%q + %q) = %d, want %d", v, after, got, len(v))
			}
		}
	})
}
