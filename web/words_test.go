package web_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

var estopOperator = regexp.MustCompile(`id="estop-operator" name="operator" value="([^"]*)"`)

// TestDecisionsOfTheSignedInUserSayYou: the operator field is filled with
// the signed-in user's name; what is decided under it reads "you" on the
// Safety page, in the e-stop banner and on the Ledger page (not the
// account's name, "root"), while a name the operator typed stays that
// name. "Reset" with a capital R, spaces around it, resets the stop.
func TestDecisionsOfTheSignedInUserSayYou(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	m := estopOperator.FindStringSubmatch(f.get(t, b, "/safety"))
	if m == nil || m[1] == "" {
		t.Skip("this system gives no name for the signed-in user, so the operator field starts empty")
	}
	account := m[1]
	if r := f.post(t, b, "/safety/estop", "operator", account, "reason", "lunch"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("estop: %d", r.StatusCode)
	}
	safety := f.get(t, b, "/safety")
	if !strings.Contains(safety, `data-testid="estop-by">you<`) || !strings.Contains(safety, "pressed first by you: lunch") {
		t.Errorf("the Safety page does not say you pressed the stop:\n%s", mainText(safety))
	}
	if strings.Contains(safety, `href="/safety">reset it on the Safety page`) {
		t.Error("the Safety page's banner links to the Safety page")
	}
	c := hearthtest.Connect(t, f.in.URL, "conv-words")
	c.Call("fs", map[string]any{"operation": "write", "path": f.in.Root + "/x.txt", "data": "x", "expected_sha256": nil})
	if r := f.post(t, b, "/safety/reset", "operator", "Ann", "confirm", "  Reset "); r.StatusCode != http.StatusSeeOther || f.latched(t) {
		t.Fatalf("typed Reset did not reset the stop: %d latched=%v", r.StatusCode, f.latched(t))
	}
	ledger := mainText(f.get(t, b, "/ledger"))
	for _, want := range []string{"You pressed the emergency stop: lunch", "Ann reset the emergency stop",
		"Not allowed, because the emergency stop was on: write a file"} {
		if !strings.Contains(ledger, want) {
			t.Errorf("the Ledger page lacks %q:\n%s", want, ledger)
		}
	}
	if strings.Contains(ledger, account+" pressed") {
		t.Errorf("the Ledger page names the account %q instead of you", account)
	}
}
