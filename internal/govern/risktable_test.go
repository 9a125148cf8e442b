//go:build !windows

package govern_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hearth-dev/hearth/internal/callpath"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/risk"
)

// verdictOf is what Admit's answer means in the risk table's words.
func verdictOf(err error) risk.Verdict {
	var pe *primitive.Error
	switch {
	case err == nil:
		return risk.Runs
	case errors.Is(err, callpath.ErrPermitRequired):
		return risk.Asks
	case errors.As(err, &pe) && pe.State == primitive.StateBlocked:
		return risk.Refused
	}
	return risk.Verdict("error: " + err.Error())
}

// TestAdmitFollowsTheRiskTable: on a real Hearth, governance does with
// every registered primitive, in every mode, what the risk table says:
// each primitive whose calls are one case gives that case's verdict, and
// each case of the others is reached by a call that is that case (an
// ordinary file and a shell start-up file; a program with and without an
// allow-rule; fallback input, a console, an app before and after the
// operator allowed it in the conversation).
func TestAdmitFollowsTheRiskTable(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	in := hearthtest.Start(t, func(c *config.Config) { c.Roots = []string{home} })
	g := in.App.Gov
	admit := func(name, route, input string) error {
		spec, ok := in.App.Registry.Lookup(name)
		if !ok {
			t.Fatalf("no primitive %s", name)
		}
		a := dispatch.NewAdmission(dispatch.Request{Route: route, Spec: spec, Input: json.RawMessage(input)}, "")
		return g.Admit(ctx, a)
	}
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	shell := exec.Command("sh", "-c", "sleep 60")
	if err := shell.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shell.Process.Kill(); shell.Wait() })

	for _, mode := range risk.Modes {
		if err := in.App.Operator.SetPolicy(ctx, "alice", mode); err != nil {
			t.Fatal(err)
		}
		for _, spec := range in.App.Registry.All() {
			want, fixed := risk.Always(spec.Name(), mode)
			if !fixed {
				continue
			}
			if got := verdictOf(admit(spec.Name(), "r:table", `{}`)); got != want {
				t.Errorf("%s in %s: Admit %s, the table says %s", spec.Name(), mode, got, want)
			}
		}
		for _, c := range []struct {
			name, input string
			is          risk.CaseID
		}{
			{"fs.write", `{"path":` + strconv.Quote(filepath.Join(home, "notes.txt")) + `,"data":"x"}`, risk.CaseWrite},
			{"fs.write", `{"path":` + strconv.Quote(filepath.Join(home, ".bashrc")) + `,"data":"x"}`, risk.CasePersist},
			{"fs.write", `{"path":` + strconv.Quote(filepath.Join(home, ".config", "app.ini")) + `,"data":"x"}`, risk.CaseUnusual},
			{"fs.patch", `{"path":` + strconv.Quote(filepath.Join(home, ".ssh", "authorized_keys")) + `}`, risk.CasePersist},
			{"machine.exec", `{"command":"hearth-never-allowed"}`, risk.CaseExec},
			{"ui.action", `{"action":"click","allow_fallback":true,"hwnd":5,"target":{"name":"x"}}`, risk.CaseFallback},
			{"ui.action", `{"action":"invoke","process_id":` + strconv.Itoa(shell.Process.Pid) + `,"target":{"name":"x"}}`, risk.CaseUIConsole},
			{"ui.action", `{"action":"invoke","process_id":` + strconv.Itoa(sleeper.Process.Pid) + `,"target":{"name":"x"}}`, risk.CaseUIApp},
		} {
			want := risk.CaseOf(c.is).Verdict(mode)
			if got := verdictOf(admit(c.name, "r:cases-"+mode, c.input)); got != want {
				t.Errorf("%s %s (%s) in %s: Admit %s, the table says %s", c.name, c.input, c.is, mode, got, want)
			}
		}
	}

	// ask: an allow-rule makes a program CaseAllowed; an approved app is
	// CaseUIGranted in its conversation only.
	if err := in.App.Operator.SetPolicy(ctx, "alice", config.ModeAsk); err != nil {
		t.Fatal(err)
	}
	if _, err := in.App.Operator.AddRule(ctx, "alice", "true", ""); err != nil {
		t.Fatal(err)
	}
	if got := verdictOf(admit("machine.exec", "r:x", `{"command":"true"}`)); got != risk.CaseOf(risk.CaseAllowed).Ask {
		t.Errorf("an allowed program in ask: %s", got)
	}
	c := hearthtest.Connect(t, in.URL, "app-grant")
	act := map[string]any{"operation": "action", "action": "invoke", "process_id": sleeper.Process.Pid, "target": map[string]any{"name": "x"}}
	r := c.Call("ui", act)
	pid, _ := r.Get("permit_id").(string)
	if r.State() != "pending" || pid == "" {
		t.Fatalf("the first use of an app must ask: %s", r.Raw)
	}
	ps, err := in.App.Operator.Permits(ctx, "pending")
	if err != nil || len(ps) == 0 || ps[0].Case != string(risk.CaseUIApp) || ps[0].Subject != "sleep" {
		t.Fatalf("the card must name the app: %v %+v", err, ps)
	}
	if err := in.App.Operator.Approve(ctx, pid, "alice", nil); err != nil {
		t.Fatal(err)
	}
	// The grant is looked at by Admit itself (off Windows the ui tool is
	// refused after its first run, before governance).
	route := mcpserver.Route(map[string]any{"hearth/conversation": "app-grant"})
	input := `{"action":"invoke","process_id":` + strconv.Itoa(sleeper.Process.Pid) + `,"target":{"name":"x"}}`
	if got := verdictOf(admit("ui.action", route, input)); got != risk.Runs {
		t.Fatalf("an app the operator allowed in this chat asked again: %s", got)
	}
	if got := verdictOf(admit("ui.action", mcpserver.Route(map[string]any{"hearth/conversation": "another-chat"}), input)); got != risk.Asks {
		t.Fatalf("an app allowed in one chat must ask in another: %s", got)
	}
	consoleInput := `{"action":"invoke","process_id":` + strconv.Itoa(shell.Process.Pid) + `,"target":{"name":"x"}}`
	r = c.Call("ui", map[string]any{"operation": "action", "action": "invoke", "process_id": shell.Process.Pid, "target": map[string]any{"name": "x"}})
	if r.State() == "completed" {
		t.Fatalf("typing into a console ran without asking: %s", r.Raw)
	}
	if got := verdictOf(admit("ui.action", route, consoleInput)); got != risk.Asks {
		t.Fatalf("a console must ask every time, even in a chat with an allowed app: %s", got)
	}
}
