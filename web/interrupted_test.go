//go:build !windows

package web_test

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
	"github.com/hearth-dev/hearth/internal/govern/governtest"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestInterruptedActionSaysWhatItWas: Hearth is killed (SIGKILL, as a
// crash or a lost power) while a chat's `sleep 30` runs; after the restart
// the Safety page's card for the interrupted action says what it was in
// words (the command line), which chat asked, when it started and what
// Hearth knows, not only identifiers under Details.
func TestInterruptedActionSaysWhatItWas(t *testing.T) {
	home := t.TempDir()
	edit := func(c *config.Config) { hearthtest.Trusted(c); hearthtest.ProductionBudget(c) }
	hearthtest.WriteConfig(t, home, edit)
	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "interrupted-chat")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "sleep", "args": []string{"30"}})
	if r.State() != "pending" {
		t.Fatalf("sleep 30 answers: %s", r.Raw)
	}
	p.Kill()

	f := fixtureOf(t, hearthtest.StartHome(t, home, edit))
	b := f.login(t)
	page := f.get(t, b, "/safety")
	card, _, _ := strings.Cut(page[strings.Index(page, `data-testid="unknown"`)+1:], "<details")
	if !strings.Contains(card, "Interrupted: run sleep 30") {
		t.Fatalf("the interrupted action's card does not say the command line:\n%s", card)
	}
	if i := strings.Index(card, "Asked by "); i < 0 || strings.HasPrefix(card[i+len("Asked by "):], ".") {
		t.Fatalf("the card does not say which chat asked:\n%s", card)
	}
	if !strings.Contains(card, "Hearth started it at "+time.Now().Local().Format("2006-01-02")) ||
		!strings.Contains(card, "may be done, half done or not done at all") {
		t.Fatalf("the card does not say when it started and what Hearth knows:\n%s", card)
	}
	if strings.Contains(page, "emergency stop) while these were running") {
		t.Fatal("the Safety page still says the e-stop interrupts actions (it records them as stopped)")
	}
}

// TestAllowNeverPromisesWhatTheGateRefuses: a call waiting for the
// operator in a chat whose earlier action was interrupted would be
// refused if allowed now. Its card says so, with the interrupted action
// in words and where to settle it, and offers no Allow; an Allow posted
// anyway (another tab) allows nothing, says why on the page (never "You
// allowed it" or "Hearth will run") and the request keeps waiting. Once
// the operator tells Hearth what the action did, the card offers Allow
// and the call runs.
func TestAllowNeverPromisesWhatTheGateRefuses(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	c := hearthtest.Connect(t, f.in.URL, "conv-interrupted-permit")
	pid, fid := execNeedingPermit(t, c, "date")
	route := dispatchtest.Route(t, f.in.App.DB, fid)
	if err := f.in.App.DB.InTx(context.Background(), func(tx *sql.Tx) error {
		return governtest.OpenUnknownTx(context.Background(), tx, "cmd-interrupted", route, "machine.exec", time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	page := f.get(t, b, "/permits")
	if !strings.Contains(page, `data-testid="permit-interrupted"`) || !strings.Contains(page, "Allowing it would not run it") {
		t.Fatalf("the card does not say the interrupted action blocks the call:\n%s", page)
	}
	if strings.Contains(page, `data-testid="approve-once"`) {
		t.Fatal("the card offers Allow once for a call the gate would refuse")
	}
	if r := f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ann", "scope", "once"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d %s", r.StatusCode, r.body)
	}
	page = f.get(t, b, "/permits")
	if !strings.Contains(page, "Nothing was allowed: this chat&#39;s earlier action") || strings.Contains(page, "You allowed it") || strings.Contains(page, "Hearth will") {
		t.Fatalf("after Allow the page does not say what really happened:\n%s", page)
	}
	if ps, _ := f.in.App.Operator.Permits(t.Context(), "pending"); len(ps) != 1 || ps[0].ID != pid {
		t.Fatalf("the request must keep waiting: %+v", ps)
	}
	if r := f.post(t, b, "/safety/reconcile", "operator", "Ann", "command_id", "cmd-interrupted", "observed", "it did nothing"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("reconcile: %d %s", r.StatusCode, r.body)
	}
	if page := f.get(t, b, "/permits"); !strings.Contains(page, `data-testid="approve-once"`) || strings.Contains(page, `data-testid="permit-interrupted"`) {
		t.Fatal("once the action is settled the card does not offer Allow again")
	}
	if r := f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ann", "scope", "once"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve after the reconcile: %d %s", r.StatusCode, r.body)
	}
	if env := await(t, c, fid); env["state"] != "completed" {
		t.Fatalf("the allowed call: %v", env)
	}
}
