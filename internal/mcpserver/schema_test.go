//go:build !windows

package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestAdvertisedSchemasAreSelfContained: no advertised schema uses $ref or
// $defs (several MCP clients drop $defs or cannot resolve a $ref), and the
// run tool's schema, read by a JSON Schema validator as a client would,
// accepts a scatter call whose field is a future reference as well as one
// with a plain value, and refuses a value of the wrong type.
func TestAdvertisedSchemasAreSelfContained(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "")
	res, err := c.Session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var run json.RawMessage
	for _, tl := range res.Tools {
		raw, _ := json.Marshal(tl.InputSchema)
		for _, k := range []string{`"$ref"`, `"$defs"`, `"definitions"`} {
			if strings.Contains(string(raw), k) {
				t.Errorf("tool %s: advertised schema uses %s", tl.Name, k)
			}
		}
		if tl.Name == "run" {
			run = raw
		}
	}
	if run == nil {
		t.Fatal("tools/list lacks run")
	}
	var sch jsonschema.Schema
	if err := json.Unmarshal(run, &sch); err != nil {
		t.Fatalf("run schema: %v", err)
	}
	rs, err := sch.Resolve(nil)
	if err != nil {
		t.Fatalf("resolve run schema: %v", err)
	}
	call := func(path any) map[string]any {
		return map[string]any{"operation": "scatter", "calls": []any{
			map[string]any{"kind": "fs.stat", "path": "/x"},
			map[string]any{"kind": "fs.read", "path": path},
		}}
	}
	for name, v := range map[string]any{
		"plain value":      "/x",
		"future reference": map[string]any{"$future": 0, "$path": "result.path"},
		"future id":        map[string]any{"$future": "fut_aaaaaaaaaaaaaaaaaaaa", "$path": "result.path"},
	} {
		if err := rs.Validate(call(v)); err != nil {
			t.Errorf("%s: the advertised run schema refuses it: %v", name, err)
		}
	}
	for name, v := range map[string]any{
		"a number":                  7,
		"an object without $future": map[string]any{"$path": "result.path"},
	} {
		if err := rs.Validate(call(v)); err == nil {
			t.Errorf("%s as fs.read path: the advertised run schema accepts it", name)
		}
	}
}
