package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestObjectFieldsAgreesWithDecoder: where objectFields splits an object,
// encoding/json reads the same members; the repeated keys, escaped keys
// and non-objects it refuses are listed.
func TestObjectFieldsAgreesWithDecoder(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{`{}`, true},
		{` { } `, true},
		{`{"a":1}`, true},
		{`{"a":"x}\"]","b":[1,{"c":"]"}],"d":{"e":[]},"f":null,"g":-1.5e3,"h":true}`, true},
		{"{\n\t\"a\" :\r 1 ,\"b\":\"\\\\\"}\n", true},
		{`{"a":1,"a":2}`, false},
		{`{"a\u0062":1}`, false},
		{`{"a\"":1}`, false},
		{`[1]`, false},
		{`"x"`, false},
		{`null`, false},
		{`5`, false},
		{`{"a":1} {}`, false},
		{`{` + manyMembers(maxMembers) + `}`, true},
		{`{` + manyMembers(maxMembers+1) + `}`, false},
	}
	for _, c := range cases {
		split, ok := objectFields(json.RawMessage(c.in), nil)
		if ok != c.ok {
			t.Errorf("%s: ok %v, want %v", c.in, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		got := map[string]json.RawMessage{}
		for _, m := range split {
			got[string(m.key)] = m.val
		}
		if len(got) != len(split) {
			t.Errorf("%s: a key split twice: %q", c.in, split)
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.in), &want); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if len(want) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: split %q, decoder %q", c.in, got, want)
		}
	}
}

// TestPlainID: the ids the fast path copies into its answer verbatim.
func TestPlainID(t *testing.T) {
	for id, want := range map[string]bool{
		`1`: true, `0`: true, `-7`: true, `"a"`: true, `""`: true, `123456789012345`: true,
		`-0`: false, `01`: false, `1.5`: false, `1e3`: false, `1234567890123456`: false,
		`"a\"b"`: false, `"\u0061"`: false, `null`: false, `{}`: false, `true`: false, `-`: false,
	} {
		if got := plainID(json.RawMessage(id)); got != want {
			t.Errorf("plainID(%s) = %v, want %v", id, got, want)
		}
	}
}

// manyMembers is n members "k0":0,"k1":1,...
func manyMembers(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return strings.Join(parts, ",")
}
