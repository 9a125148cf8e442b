//go:build !windows

package govern_test

import (
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// The operator's e-stop record stands: the model's machine.estop while
// the operator's stop is on is added to the history, and neither its
// name nor its words replace who stopped it first and why.
func TestModelEStopDuringOperatorEStopKeepsTheRecord(t *testing.T) {
	in := hearthtest.Start(t, nil)
	if err := in.App.Operator.EStop(bg, "Ann", "it deleted my photos"); err != nil {
		t.Fatal(err)
	}
	c := hearthtest.Connect(t, in.URL, "estop-record")
	for range govern.MaxLaterLatches + 3 {
		if r := c.Call("machine", map[string]any{"operation": "estop", "reason": "false alarm, safe to reset"}); r.State() != "completed" {
			t.Fatalf("model estop: %s", r.Raw)
		}
	}
	st, err := in.App.Gov.EStop(bg)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Latched || st.By != "operator:Ann" || st.Reason != "it deleted my photos" || st.ByModel() {
		t.Fatalf("the model's press replaced the operator's record: %+v", st)
	}
	if strings.Contains(st.Reason, "safe to reset") {
		t.Fatalf("the record says what the model wrote: %q", st.Reason)
	}
	if len(st.Later) != govern.MaxLaterLatches || st.Dropped != 3 {
		t.Fatalf("later presses: %d kept, %d dropped; want %d and 3", len(st.Later), st.Dropped, govern.MaxLaterLatches)
	}
	if p := st.Later[0]; p.By != "model" || p.Reason != "false alarm, safe to reset" || p.At.Before(st.At) {
		t.Fatalf("the model's press in the history: %+v", p)
	}
	// The operator pressing again is history too, and a reset clears it all.
	if err := in.App.Operator.EStop(bg, "Bob", "again"); err != nil {
		t.Fatal(err)
	}
	if st, _ := in.App.Gov.EStop(bg); st.By != "operator:Ann" {
		t.Fatalf("a second operator press replaced the first: %+v", st)
	}
	if err := in.App.Operator.Reset(bg, "Ann"); err != nil {
		t.Fatal(err)
	}
	st, _ = in.App.Gov.EStop(bg)
	if st.Latched || len(st.Later) != 0 {
		t.Fatalf("after reset: %+v", st)
	}
	// After a reset the next press is the first again.
	if r := c.Call("machine", map[string]any{"operation": "estop", "reason": "loop"}); r.State() != "completed" {
		t.Fatalf("model estop: %s", r.Raw)
	}
	if st, _ := in.App.Gov.EStop(bg); !st.ByModel() || st.Reason != "loop" {
		t.Fatalf("a press after reset: %+v", st)
	}
}
