package session

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// TestSchemaBoundsNameTheField: the advertised fields' bounds are
// enforced before anything runs, each refusal naming the field.
func TestSchemaBoundsNameTheField(t *testing.T) {
	e := newEnv(t, nil)
	reg, err := primitive.NewRegistry(e.m.Specs()...)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 65)
	for i := range keys {
		keys[i] = "Enter"
	}
	many, _ := json.Marshal(keys)
	cases := []struct{ args, field string }{
		{`{"operation":"session_send","session_id":"ses_x","keys":` + string(many) + `}`, "keys"},
		{`{"operation":"session_send","session_id":"ses_x","keys":["Hyper"]}`, "keys"},
		{`{"operation":"session_read","session_id":"ses_x","wait_ms":30001}`, "wait_ms"},
		{`{"operation":"session_read","session_id":"ses_x","offset":-1}`, "offset"},
		{`{"operation":"session_read"}`, "session_id"},
		{`{"operation":"session_start"}`, "command"},
	}
	for _, c := range cases {
		if _, _, _, err := reg.Decode("machine", json.RawMessage(c.args)); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v, want a refusal naming %s", c.args, err, c.field)
		}
	}
	if _, _, _, err := reg.Decode("machine", json.RawMessage(`{"operation":"session_send","session_id":"ses_x","text":"1","keys":["Enter","Ctrl-C"]}`)); err != nil {
		t.Errorf("a valid send: %v", err)
	}
}
