package selftest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/hearth-dev/hearth/internal/selftestreport"
	"github.com/hearth-dev/hearth/internal/session"
)

// TestSessionCheckTalksToARealConsoleProgram runs hearth.start and
// session.console on this machine for real (sh on a pty here; cmd.exe on
// ConPTY on Windows, skipped with Hearth's reason where ConPTY is not
// usable), then a last check that finds the session's start approved by
// the selftest and its close journaled.
func TestSessionCheckTalksToARealConsoleProgram(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var stdout bytes.Buffer
	rep, _ := Run(context.Background(), Options{Stdout: &stdout, Version: "test", checks: func(r *run) []check {
		var out []check
		for _, c := range r.checks() {
			if c.name == "hearth.start" || c.name == "session.console" {
				out = append(out, c)
			}
		}
		return append(out, check{name: "session.after", needs: []string{"session.console"}, run: func(ctx context.Context) (string, error) {
			tail, err := r.hearth.app.Ledger.Tail(ctx, 200)
			if err != nil {
				return "", err
			}
			approved, closed := false, false
			for _, e := range tail {
				var d map[string]any
				if json.Unmarshal(e.Data, &d) != nil {
					continue
				}
				approved = approved || e.Kind == "permit_approved" && d["operator"] == Operator
				closed = closed || e.Kind == session.KindClosed && d["reason"] == session.ReasonClosed && d["killed"] == true
			}
			if !approved || !closed {
				return "", fmt.Errorf("ledger: permit approved by the selftest %v, session closed and killed %v", approved, closed)
			}
			return "journaled", nil
		}})
	}})
	t.Logf("selftest output:\n%s", stdout.String())
	got := map[string]selftestreport.Result{}
	for _, c := range rep.Checks {
		got[c.Name] = c
	}
	want := []string{"hearth.start", "session.console", "session.after"}
	if runtime.GOOS == "windows" && got["session.console"].Status == selftestreport.Skipped {
		want = want[:1] // no usable ConPTY here (Wine): the skip names Hearth's reason
	}
	for _, name := range want {
		if got[name].Status != selftestreport.OK {
			t.Errorf("%s: %s %s", name, got[name].Status, got[name].Detail)
		}
	}
}
