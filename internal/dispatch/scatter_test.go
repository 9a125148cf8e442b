package dispatch

import (
	"context"
	"encoding/json"
	"testing"
)

// TestScatterSubmitsInOrder: index references become the future ids of
// earlier calls, every call gets a command id derived from the parent's,
// and refusals at submission are counted.
func TestScatterSubmitsInOrder(t *testing.T) {
	f := newDepsFixture(t)
	d := f.start(t, 4)
	defer d.Stop()
	calls := []ScatterCall{
		{Request: Request{Route: testRoute, Spec: f.spec("echo")}, Fields: map[string]any{"text": map[string]any{"$future": json.Number("1"), "$path": "result.text"}}, After: []int{1}},
		{Request: Request{Route: testRoute, Spec: f.spec("echo")}, Fields: map[string]any{"text": "from one"}},
		{Request: Request{Route: testRoute, Spec: f.spec("echo")}, Fields: map[string]any{"text": "x"}, Deps: []string{"fut_aaaaaaaaaaaaaaaaaaaa"}},
	}
	ids, refused, err := d.Scatter(context.Background(), "cmd-parent", calls, []int{1, 0, 2})
	if err != nil {
		t.Fatal(err)
	}
	if refused != 1 {
		t.Fatalf("a call with an unknown dependency is refused at submission: refused %d", refused)
	}
	if _, env := settle(t, d, ids[0]); env["result"].(map[string]any)["text"] != "from one" {
		t.Fatalf("calls[0] did not read calls[1]'s result: %v", env)
	}
	for i, id := range ids {
		var cmd string
		if err := f.db.R.QueryRow(`SELECT command_id FROM futures WHERE id = ?`, id).Scan(&cmd); err != nil || cmd != ChildCommandID("cmd-parent", "call", i) {
			t.Errorf("calls[%d] command id %q, %v", i, cmd, err)
		}
	}
}
