package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/hearth-dev/hearth/internal/dispatch"
)

func TestSettleOwnAnswersAPendingCallInlineWithItsOwnArrival(t *testing.T) {
	own, _ := json.Marshal(dispatch.Envelope{State: "completed", Primitive: "machine.exec", Result: map[string]any{"exit_code": 0}})
	other, _ := json.Marshal(dispatch.Envelope{State: "completed", Primitive: "fs.read"})
	arr := []dispatch.Arrival{{Seq: 1, FutureID: "fut_other", Envelope: other}, {Seq: 2, FutureID: "fut_own", Envelope: own}}
	pending := &dispatch.Envelope{State: "pending", Primitive: "machine.exec", FutureID: "fut_own", CommandID: "cmd1"}

	env, rest := settleOwn(pending, arr)
	if env.State != "completed" || env.FutureID != "fut_own" || env.CommandID != "cmd1" || env.Result == nil {
		t.Fatalf("settled envelope %+v", env)
	}
	if len(rest) != 1 || rest[0].FutureID != "fut_other" {
		t.Fatalf("the own arrival must leave the list, the others stay: %+v", rest)
	}
	if len(arr) != 2 || arr[1].FutureID != "fut_own" {
		t.Fatalf("the caller's slice was changed: %+v", arr)
	}

	// A pending call whose result has not arrived stays pending.
	env, rest = settleOwn(pending, arr[:1])
	if env != pending || len(rest) != 1 {
		t.Fatalf("unsettled: %+v %+v", env, rest)
	}
	// A completed answer is left alone.
	done := &dispatch.Envelope{State: "completed", FutureID: "fut_own"}
	if env, rest = settleOwn(done, arr); env != done || len(rest) != 2 {
		t.Fatalf("completed: %+v %+v", env, rest)
	}
}
