package runs

import (
	"encoding/json"
	"testing"

	"github.com/hearth-dev/hearth/internal/primitive"
)

func TestCommandTextQuoting(t *testing.T) {
	for _, c := range []struct{ in, posix, windows string }{
		{"plain-1.2", "plain-1.2", "plain-1.2"},
		{"", "''", `""`},
		{"a b", "'a b'", `"a b"`},
		{`it's`, `'it'\''s'`, `it's`},
		{`a"b`, `'a"b'`, `"a\"b"`},
		{`a b\`, `'a b\'`, `"a b\\"`},
		{`a\"b c`, `'a\"b c'`, `"a\\\"b c"`},
		{`$(x); y`, `'$(x); y'`, `"$(x); y"`},
	} {
		if got := posixQuote(c.in); got != c.posix {
			t.Errorf("posixQuote(%q) = %s, want %s", c.in, got, c.posix)
		}
		if got := windowsQuote(c.in); got != c.windows {
			t.Errorf("windowsQuote(%q) = %s, want %s", c.in, got, c.windows)
		}
	}
	if got := commandText([]string{"oracle", "-p", "a b"}, "linux"); got != "oracle -p 'a b'" {
		t.Errorf("commandText: %s", got)
	}
}

func TestFieldAtAndPlaceholder(t *testing.T) {
	spec := &primitive.Spec{Tool: "t", Operation: "x", Fields: []primitive.Field{
		{Name: "args", Type: primitive.TArray, Items: &primitive.Field{Type: primitive.TString}},
		{Name: "env", Type: primitive.TObject, Values: primitive.TString},
		{Name: "job", Type: primitive.TObject, Fields: []primitive.Field{
			{Name: "n", Type: primitive.TInteger, Min: primitive.Bound(3)},
			{Name: "mode", Type: primitive.TString, Enum: []string{"a", "b"}},
			{Name: "list", Type: primitive.TArray, Min: primitive.Bound(2), Items: &primitive.Field{Type: primitive.TBoolean}},
		}},
		{Name: "sha", Type: primitive.TString, Nullable: true},
	}}
	for _, c := range []struct {
		at   string
		want any
	}{
		{"args[3]", "$future"},
		{"env.HOME", "$future"},
		{"job.n", 3.0},
		{"job.mode", "a"},
		{"job.list", []any{false, false}},
		{"job.list[1]", false},
		{"sha", nil},
		{"nope", nil},
		{"args.x", nil},
	} {
		got := placeholder(fieldAt(spec, c.at))
		if gs, ws := toJSON(got), toJSON(c.want); gs != ws {
			t.Errorf("placeholder at %s = %s, want %s", c.at, gs, ws)
		}
	}
	if got := splitPath("a.b[2][0].c"); len(got) != 5 || got[2] != "[2]" || got[3] != "[0]" || got[4] != "c" {
		t.Errorf("splitPath: %q", got)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
