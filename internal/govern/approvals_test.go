//go:build !windows

package govern_test

import (
	"testing"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestApprovalsOf: the Changes page names the approval a call ran under:
// an approved permit's call has it (who, which permit), a call that ran
// without asking has none.
func TestApprovalsOf(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask: exec needs a permit
	c := hearthtest.Connect(t, in.URL, "approvals")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"x"}})
	pid, _ := r.Env["permit_id"].(string)
	fid, _ := r.Env["future_id"].(string)
	if r.State() != "pending" || pid == "" || fid == "" {
		t.Fatalf("exec in ask mode should wait for a permit: %s", r.Raw)
	}
	op := &govern.Decisions{G: in.App.Gov}
	got, err := op.ApprovalsOf(bg, []string{fid})
	if err != nil || len(got) != 0 {
		t.Fatalf("a pending permit is no approval: %v %v", got, err)
	}
	if err := in.App.Operator.Approve(bg, pid, "alice", nil); err != nil {
		t.Fatal(err)
	}
	got, err = op.ApprovalsOf(bg, []string{fid, "fut_aaaaaaaaaaaaaaaaaaaa"})
	if err != nil || len(got) != 1 || got[fid].By != "alice" || got[fid].PermitID != pid || got[fid].At.IsZero() {
		t.Fatalf("approvals %+v %v", got, err)
	}
}
