//go:build !windows

package control_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// TestApproveDuringEStopApprovesNothing: while the e-stop is latched an
// approval commits nothing (the permit keeps waiting, the ledger holds no
// "approved"), and once the operator resets the stop the same permit is
// approved and its call runs. An approval committed just before a latch
// (the race the check cannot close) has its refusal journaled after it,
// so the ledger's last word on that call is its outcome.
func TestApproveDuringEStopApprovesNothing(t *testing.T) {
	ctx := context.Background()
	in := hearthtest.Start(t, nil) // ask
	c := hearthtest.Connect(t, in.URL, "estop-permit")
	route := mcpserver.Route(map[string]any{"hearth/conversation": c.Conversation})
	settled := func(fid string) string {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			f, err := in.App.Dispatcher.GetFuture(ctx, route, fid)
			if err != nil {
				t.Fatal(err)
			}
			if f.State != "permit" && f.State != "queued" && f.State != "running" {
				return f.State
			}
			if time.Now().After(deadline) {
				t.Fatalf("future %s never settled: %+v", fid, f)
			}
		}
	}
	kinds := func() []string {
		t.Helper()
		es, err := in.App.Ledger.Tail(ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Kind+" "+string(e.Data))
		}
		return out
	}

	r := c.Call("machine", map[string]any{"operation": "exec", "command": "true"})
	pid, fid := r.Str("permit_id"), r.Str("future_id")
	if r.State() != "pending" || pid == "" {
		t.Fatalf("first call: %s", r.Raw)
	}
	if err := in.App.Operator.EStop(ctx, "alice", "test"); err != nil {
		t.Fatal(err)
	}
	if err := in.App.Operator.Approve(ctx, pid, "alice", nil); !errors.Is(err, govern.ErrEStopLatched) {
		t.Fatalf("approving during the e-stop: %v, want ErrEStopLatched", err)
	}
	if ps, _ := in.App.Operator.Permits(ctx, "pending"); len(ps) != 1 || ps[0].ID != pid {
		t.Fatalf("after an approval refused by the e-stop the permit must still wait: %+v", ps)
	}
	for _, k := range kinds() {
		if strings.HasPrefix(k, "permit_approved ") {
			t.Fatalf("the ledger says approved for a call the e-stop holds: %s", k)
		}
	}
	if err := in.App.Operator.Reset(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := in.App.Operator.Approve(ctx, pid, "alice", nil); err != nil {
		t.Fatal(err)
	}
	if st := settled(fid); st != "completed" {
		t.Fatalf("approved after the reset, the call ended %s", st)
	}

	// The race: approved (committed), then latched before it ran.
	r2 := c.Call("machine", map[string]any{"operation": "exec", "command": "true", "args": []string{"2"}})
	d, err := (&govern.Decisions{G: in.App.Gov}).Approve(ctx, r2.Str("permit_id"), "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.App.Operator.EStop(ctx, "alice", "race"); err != nil {
		t.Fatal(err)
	}
	if err := in.App.Dispatcher.ReleaseApproved(ctx, d.FutureID); err != nil {
		t.Fatal(err)
	}
	if st := settled(d.FutureID); st != "blocked" {
		t.Fatalf("an approved call released under the e-stop ended %s, want blocked", st)
	}
	ks := kinds()
	last := ""
	for _, k := range ks {
		if strings.Contains(k, r2.Str("command_id")) || strings.Contains(k, r2.Str("permit_id")) {
			last = k
		}
	}
	kind, data, _ := strings.Cut(last, " ")
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil && last != "" {
		t.Fatal(err)
	}
	if kind != "outcome" || m["state"] != "blocked" || m["error_code"] != "estop" {
		t.Fatalf("the ledger's last word on an approved call the e-stop refused is %q, want its blocked outcome\n%s", last, strings.Join(ks, "\n"))
	}
}
