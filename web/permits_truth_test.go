package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/web/safety"
)

// TestPermitsDuringEStopSayWhatHappens: while the e-stop is on, the
// Permits page says nothing runs until the stop is reset and offers no
// Allow; an approval posted anyway (another tab, the banner) says nothing
// was allowed and the request keeps waiting — never "You allowed it" —
// and ChatGPT's call is not refused behind the operator's back. After the
// reset the same card is allowed and the call runs.
func TestPermitsDuringEStopSayWhatHappens(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	c := hearthtest.Connect(t, f.in.URL, "conv-estop-permit")
	pid, fid := execNeedingPermit(t, c, "held")
	if r := f.post(t, b, "/safety/estop", "operator", "Ann", "reason", "test"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("e-stop: %d %s", r.StatusCode, r.body)
	}
	page := f.get(t, b, "/permits")
	for _, want := range []string{`data-testid="permits-estop"`, `data-testid="permit-estop"`, `data-permit-id="` + pid + `"`, `data-testid="deny"`} {
		if !strings.Contains(page, want) {
			t.Errorf("during the e-stop the Permits page lacks %s", want)
		}
	}
	for _, not := range []string{`data-testid="approve-once"`, `data-testid="approve-always"`, `data-testid="approve-always-custom"`} {
		if strings.Contains(page, not) {
			t.Errorf("during the e-stop the Permits page offers %s", not)
		}
	}
	// The banner every other page shows says the same, with no Allow.
	if status := f.get(t, b, "/"); !strings.Contains(status, `data-testid="waiting-estop"`) || strings.Contains(status, `data-testid="waiting-allow"`) {
		t.Errorf("during the e-stop the waiting banner offers Allow or does not say why not")
	}
	if r := f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ann", "scope", "once"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d %s", r.StatusCode, r.body)
	}
	page = f.get(t, b, "/permits")
	if !strings.Contains(page, "Nothing was allowed: the emergency stop is on") || strings.Contains(page, "You allowed it") {
		t.Fatalf("after Allow during the e-stop the page does not say what happened:\n%s", page)
	}
	if ps, _ := f.in.App.Operator.Permits(t.Context(), "pending"); len(ps) != 1 || ps[0].ID != pid {
		t.Fatalf("the request must keep waiting: %+v", ps)
	}
	if r := f.post(t, b, "/safety/reset", "operator", "Ann", "confirm", safety.ResetWord); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("reset: %d %s", r.StatusCode, r.body)
	}
	if page := f.get(t, b, "/permits"); !strings.Contains(page, `data-testid="approve-once"`) || strings.Contains(page, `data-testid="permit-estop"`) {
		t.Fatal("after the reset the card does not offer Allow again")
	}
	if r := f.post(t, b, "/permits/"+pid+"/approve", "operator", "Ann", "scope", "once"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve after reset: %d %s", r.StatusCode, r.body)
	}
	if env := await(t, c, fid); env["state"] != "completed" {
		t.Fatalf("allowed after the reset, the call ended %v", env)
	}
}

// TestDeniedRequestIsNotAskedAgain: after Deny the same call in the same
// chat is answered no at once (no new card); the Permits page lists the
// denial with Ask again (a CSRF-checked POST), which ends that, and the
// next identical call asks again.
func TestDeniedRequestIsNotAskedAgain(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	c := hearthtest.Connect(t, f.in.URL, "conv-denied")
	pid, _ := execNeedingPermit(t, c, "no")
	if r := f.post(t, b, "/permits/"+pid+"/deny", "operator", "Ann"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("deny: %d %s", r.StatusCode, r.body)
	}
	page := f.get(t, b, "/permits")
	if !strings.Contains(page, `data-testid="denied-item" data-permit-id="`+pid+`"`) || !strings.Contains(page, `data-testid="ask-again"`) ||
		!strings.Contains(page, "15 minutes") {
		t.Fatalf("after Deny the page does not show the denial with Ask again:\n%s", page)
	}
	retry := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"no"}})
	if retry.State() != "blocked" || retry.Get("error.code") != "permit_denied" || retry.Env["permit_id"] != nil {
		t.Fatalf("the denied call asked again must be answered no at once: %s", retry.Raw)
	}
	if page := f.get(t, b, "/permits"); !strings.Contains(page, `data-count="0"`) {
		t.Fatal("the retry of a denied call made a new card")
	}
	if r := f.do(t, req{method: "POST", path: "/permits/" + pid + "/ask-again", b: b, csrf: "-", form: map[string][]string{"operator": {"Ann"}}}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("Ask again without the CSRF token: %d", r.StatusCode)
	}
	if r := f.post(t, b, "/permits/"+pid+"/ask-again", "operator", "Ann"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("ask again: %d %s", r.StatusCode, r.body)
	}
	page = f.get(t, b, "/permits")
	if strings.Contains(page, `data-testid="denied-item"`) || !strings.Contains(page, "Hearth will ask you again") {
		t.Fatalf("after Ask again:\n%s", page)
	}
	if again := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"no"}}); again.State() != "pending" {
		t.Fatalf("after Ask again the same call must ask: %s", again.Raw)
	}
}
