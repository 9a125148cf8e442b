package web_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/web/session"
)

// A safety setting lowered in the panel (here: trusted mode, from a
// session whose login another program asked for through the tray control
// endpoint) is announced by a banner on every other page until Seen is
// posted, with CSRF, under an operator's name; its ledger entry names how
// the session was started.
func TestLoweredSafetyIsAnnouncedUntilSeen(t *testing.T) {
	f := newFixture(t, nil)
	b := f.loginFrom(t, session.OriginControl)
	if strings.Contains(f.get(t, b, "/tasks"), `data-testid="lowered-banner"`) {
		t.Fatal("banner shown before anything was lowered")
	}
	// Switching to read-only lowers nothing: no banner.
	if r := f.post(t, b, "/safety/policy", "operator", "Ada", "mode", config.ModeReadOnly); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("policy read-only: %d", r.StatusCode)
	}
	if strings.Contains(f.get(t, b, "/tasks"), `data-testid="lowered-banner"`) {
		t.Fatal("banner shown after switching to read-only")
	}
	if r := f.post(t, b, "/safety/policy", "operator", "Ada", "mode", config.ModeTrusted); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("policy trusted: %d", r.StatusCode)
	}

	// The ledger entry names the session's origin.
	tail, err := f.in.App.Ledger.Tail(t.Context(), 5)
	if err != nil {
		t.Fatal(err)
	}
	var seq int64
	for _, e := range tail {
		if e.Kind != ledger.KindPolicyChange {
			continue
		}
		var d struct{ To, Session string }
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if d.To == config.ModeTrusted {
			if d.Session != session.OriginControl {
				t.Fatalf("policy_change to trusted has session %q, want %q: %s", d.Session, session.OriginControl, e.Data)
			}
			seq = e.Seq
		}
	}
	if seq == 0 {
		t.Fatal("no policy_change to trusted in the ledger")
	}

	// Every page, not only Safety, shows the banner: what, by whom, how.
	for _, page := range []string{"/", "/tasks", "/ledger", "/permits"} {
		body := f.get(t, b, page)
		if !strings.Contains(body, `data-testid="lowered-banner"`) || !strings.Contains(body, "switched to trusted mode") ||
			!strings.Contains(body, "another program asked Hearth for") || !strings.Contains(body, "Ada") {
			t.Fatalf("%s: no lowered-safety banner naming what, who and how:\n%s", page, body)
		}
	}

	// Seen without the CSRF token is refused and changes nothing.
	form := map[string][]string{"operator": {"Ada"}, "through": {strconv.FormatInt(seq, 10)}, "back": {"/tasks"}}
	if r := f.do(t, req{method: "POST", path: "/lowered/seen", b: b, form: form, csrf: "-"}); r.StatusCode != http.StatusForbidden {
		t.Fatalf("Seen without CSRF: %d, want 403", r.StatusCode)
	}
	if !strings.Contains(f.get(t, b, "/tasks"), `data-testid="lowered-banner"`) {
		t.Fatal("banner gone after a Seen without CSRF")
	}
	// Seen without an operator name is refused too.
	if r := f.post(t, b, "/lowered/seen", "through", strconv.FormatInt(seq, 10), "back", "/tasks"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("Seen without operator: %d", r.StatusCode)
	}
	if !strings.Contains(f.get(t, b, "/tasks"), `data-testid="lowered-banner"`) {
		t.Fatal("banner gone after a Seen without an operator name")
	}

	r := f.post(t, b, "/lowered/seen", "operator", "Ada", "through", strconv.FormatInt(seq, 10), "back", "/tasks")
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/tasks" {
		t.Fatalf("Seen: %d %v", r.StatusCode, r.Header)
	}
	for _, page := range []string{"/", "/tasks", "/safety"} {
		if strings.Contains(f.get(t, b, page), `data-testid="lowered-banner"`) {
			t.Fatalf("%s: banner still shown after Seen", page)
		}
	}
	// Seen is durable (kept by governance, not the session): a new
	// session does not see it either.
	if strings.Contains(f.get(t, f.login(t), "/"), `data-testid="lowered-banner"`) {
		t.Fatal("banner back in a new session after Seen")
	}
}
