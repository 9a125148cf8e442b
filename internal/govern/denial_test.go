//go:build !windows

package govern_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestDeniedCallIsAnsweredAtOnce: in ask mode the operator denies a call;
// the model's identical retry in the same conversation is answered
// blocked at once with the denial in words and when, with no new card
// and no pending. Another conversation, or another input, still asks.
// "Ask again" ends that, and the next identical call asks again.
func TestDeniedCallIsAnsweredAtOnce(t *testing.T) {
	in := hearthtest.Start(t, nil) // ask
	c := hearthtest.Connect(t, in.URL, "denied-once")
	args := map[string]any{"operation": "exec", "command": "uname", "args": []string{"-a"}}
	pendingCount := func() int {
		t.Helper()
		ps, err := in.App.Operator.Permits(bg, "pending")
		if err != nil {
			t.Fatal(err)
		}
		return len(ps)
	}

	r := c.Call("machine", args)
	pid := r.Str("permit_id")
	if r.State() != "pending" || pid == "" {
		t.Fatalf("first call: %s", r.Raw)
	}
	if err := in.App.Operator.Deny(bg, pid, "alice"); err != nil {
		t.Fatal(err)
	}
	retry := c.Call("machine", args)
	msg, _ := retry.Get("error.message").(string)
	if retry.State() != "blocked" || retry.Get("error.code") != "permit_denied" || retry.Str("permit_id") != "" {
		t.Fatalf("the retry of a denied call must be answered blocked at once: %s", retry.Raw)
	}
	if !strings.Contains(msg, "operator denied exactly this call at ") || !strings.Contains(msg, "Ask again") || retry.Get("error.details.permit_id") != pid {
		t.Fatalf("the answer does not say the denial in words, when, and how it ends: %s", retry.Raw)
	}
	if n := pendingCount(); n != 0 {
		t.Fatalf("the retry of a denied call made %d new cards", n)
	}
	ds, err := in.App.Operator.Denials(bg)
	if err != nil || len(ds) != 1 || ds[0].ID != pid || ds[0].DecidedAt.IsZero() {
		t.Fatalf("denials %+v %v, want the one of %s", ds, err, pid)
	}

	if o := hearthtest.Connect(t, in.URL, "another-chat").Call("machine", args); o.State() != "pending" {
		t.Fatalf("another conversation's identical call must ask: %s", o.Raw)
	}
	if d := c.Call("machine", map[string]any{"operation": "exec", "command": "uname", "args": []string{"-r"}}); d.State() != "pending" {
		t.Fatalf("another input must ask: %s", d.Raw)
	}

	if err := in.App.Operator.AskAgain(bg, pid, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := in.App.Operator.AskAgain(bg, pid, "alice"); !errors.Is(err, govern.ErrNotDenied) {
		t.Fatalf("asking again twice: %v", err)
	}
	if ds, _ := in.App.Operator.Denials(bg); len(ds) != 0 {
		t.Fatalf("after Ask again the denial is still listed: %+v", ds)
	}
	again := c.Call("machine", args)
	if again.State() != "pending" || again.Str("permit_id") == "" || again.Str("permit_id") == pid {
		t.Fatalf("after Ask again an identical call must ask with a new card: %s", again.Raw)
	}
}
