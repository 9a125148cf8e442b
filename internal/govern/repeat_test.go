//go:build !windows

package govern_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// TestApprovedCallReturnsItsResultOnTheNextCall: in ask mode a model calls
// exec, is told pending (permit), the operator allows it once, and the
// next identical call — a new command id — is answered with the approved
// call's result, having run it once. The call
// after that is a new call (a new permit); another conversation's
// identical call never gets the result.
func TestApprovedCallReturnsItsResultOnTheNextCall(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask
	c := hearthtest.Connect(t, in.URL, "one-approval")
	other := hearthtest.Connect(t, in.URL, "another-conversation")
	out := filepath.Join(in.Home, "ran.txt")
	args := map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "echo ran >> " + out + "; echo result"}}

	r := c.Call("machine", args)
	pid, fid := r.Str("permit_id"), r.Str("future_id")
	if r.State() != "pending" || pid == "" || fid == "" {
		t.Fatalf("first call: %s", r.Raw)
	}
	if err := in.App.Operator.Approve(bg, pid, "alice", nil); err != nil {
		t.Fatal(err)
	}
	// The approved call runs at once; its future settles (read the way
	// the model would not, so that no arrival is taken here).
	for deadline := time.Now().Add(30 * time.Second); ; {
		f, err := in.App.Dispatcher.GetFuture(bg, mcpserver.Route(map[string]any{"hearth/conversation": c.Conversation}), fid)
		if err != nil {
			t.Fatal(err)
		}
		if f.State == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the approved call never completed: %+v", f)
		}
		time.Sleep(10 * time.Millisecond)
	}
	next := c.Call("machine", args)
	if next.State() != "completed" || next.Get("replayed") != true || next.Str("future_id") != fid || next.Str("permit_id") != pid ||
		next.Get("result.stdout.text") != "result\n" {
		t.Fatalf("an approved call must return its result on the next call: %s", next.Raw)
	}
	if b, _ := os.ReadFile(out); string(b) != "ran\n" {
		t.Fatalf("the approved call ran %q, want once", b)
	}
	if o := other.Call("machine", args); o.State() != "pending" || o.Str("permit_id") == pid {
		t.Fatalf("another conversation's identical call must ask for its own permit: %s", o.Raw)
	}
	after := c.Call("machine", args)
	if after.State() != "pending" || after.Str("permit_id") == "" || after.Str("permit_id") == pid {
		t.Fatalf("after its one result, an identical call is a new call with a new permit: %s", after.Raw)
	}
	if b, _ := os.ReadFile(out); string(b) != "ran\n" {
		t.Fatalf("ran %q, want once", b)
	}
}
