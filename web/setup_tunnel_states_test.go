package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// connectThroughSetup saves a key and the tunnel ID and presses Connect,
// as the Setup page's forms do.
func connectThroughSetup(t *testing.T, f *fixture, b *browser) {
	t.Helper()
	for _, p := range []struct{ path, k, v string }{
		{"/setup/key", "key", newRuntimeKey(t)},
		{"/setup/tunnel-id", "tunnel_id", setupTunnelID},
		{"/setup/connect", "", ""},
	} {
		r := f.post(t, b, p.path, p.k, p.v)
		if r.StatusCode != http.StatusSeeOther {
			t.Fatalf("POST %s: %d %s", p.path, r.StatusCode, r.body)
		}
		if strings.Contains(f.get(t, b, "/setup"), `data-testid="flash-error"`) {
			t.Fatalf("POST %s refused:\n%s", p.path, f.get(t, b, "/setup"))
		}
	}
}

// TestTunnelTruthKeyRefused: with the FAKE control plane refusing the key
// (the fake tunnel-client logs 401s and its poll gauge never moves, while
// its /readyz answers 200, as the real one's does), neither Setup nor
// Status ever says ChatGPT can reach Hearth; both name the key once
// tunnel-client has said so.
func TestTunnelTruthKeyRefused(t *testing.T) {
	dir := besideHearth(t)
	t.Setenv("FAKE_TUNNEL_REFUSE_KEY", "1")
	f := newFixtureWith(t, nil, func(o *app.Options) { o.TunnelProgramDir = dir })
	b := f.login(t)
	connectThroughSetup(t, f, b)
	ready := []string{"ChatGPT can reach Hearth", `data-ready="true"`, `data-state="ready"`, "Connected to OpenAI"}
	never := func(where, body string) {
		t.Helper()
		for _, w := range ready {
			if strings.Contains(body, w) {
				t.Fatalf("%s says %q while the key is refused", where, w)
			}
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for f.in.App.Tunnel.Status().State != tunnel.StateKeyRefused {
		if time.Now().After(deadline) {
			t.Fatalf("the tunnel did not report the refused key: %+v", f.in.App.Tunnel.Status())
		}
		never("Setup", f.get(t, b, "/setup"))
		never("Status", f.get(t, b, "/"))
		never("Setup's live line", f.get(t, b, "/setup/progress/live?phase=connecting"))
		time.Sleep(50 * time.Millisecond)
	}
	// Refused: both pages name the key, and stay so.
	for range 10 {
		setup, status := f.get(t, b, "/setup"), f.get(t, b, "/")
		never("Setup", setup)
		never("Status", status)
		for _, w := range []string{"OpenAI refused the tunnel key", `data-testid="step-key" data-step-state="current"`, `data-testid="key-refused"`} {
			if !strings.Contains(setup, w) {
				t.Fatalf("Setup lacks %q with the key refused:\n%s", w, setup)
			}
		}
		if !strings.Contains(status, "ChatGPT cannot reach Hearth: OpenAI refused the tunnel key") {
			t.Fatalf("Status does not name the refused key:\n%s", status)
		}
		checkPlain(t, "key refused: /setup", setup)
		checkPlain(t, "key refused: /", status)
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTunnelTruthPollsSucceed: the same walk with the polls succeeding
// ends with Setup and Status saying ChatGPT can reach Hearth.
func TestTunnelTruthPollsSucceed(t *testing.T) {
	dir := besideHearth(t)
	f := newFixtureWith(t, nil, func(o *app.Options) { o.TunnelProgramDir = dir })
	b := f.login(t)
	connectThroughSetup(t, f, b)
	waitTunnel(t, f, "ready", func(st tunnel.Status) bool { return st.State == tunnel.StateReady })
	if s := f.get(t, b, "/"); !strings.Contains(s, `data-ready="true">ChatGPT can reach Hearth<`) {
		t.Fatalf("Status with the tunnel ready:\n%s", s)
	}
	if s := f.get(t, b, "/setup"); !strings.Contains(s, `data-testid="connect-state">Connected to OpenAI.`) {
		t.Fatalf("Setup with the tunnel ready:\n%s", s)
	}
	// Setup is done: a sign-in lands on Status now, no longer on Setup.
	u, err := f.panel.NewLoginURL(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if r := f.do(t, req{method: "GET", path: strings.TrimPrefix(u, f.srv.URL)}); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" {
		t.Fatalf("a sign-in after setup: %d %s, want Status", r.StatusCode, r.Header.Get("Location"))
	}
}

// TestPermitsLiveAnswers204WhileUnchanged: the live list's poll swaps
// nothing (204) while the same permits wait, and answers the list when
// they change; the badge's poll carries the count and the tab title.
func TestPermitsLiveAnswers204WhileUnchanged(t *testing.T) {
	f := newFixture(t, nil)
	b := f.login(t)
	if r := f.do(t, req{method: "GET", path: "/permits/live?ids=", b: b}); r.StatusCode != http.StatusNoContent {
		t.Fatalf("unchanged empty list: %d", r.StatusCode)
	}
	c := hearthtest.Connect(t, f.in.URL, "conv-live-204")
	pid, _ := execNeedingPermit(t, c, "x")
	r := f.do(t, req{method: "GET", path: "/permits/live?ids=", b: b})
	if r.StatusCode != http.StatusOK || !strings.Contains(r.body, `data-permit-id="`+pid+`"`) || !strings.Contains(r.body, `hx-get="/permits/live?ids=`+pid+`"`) {
		t.Fatalf("changed list: %d %s", r.StatusCode, r.body)
	}
	if r := f.do(t, req{method: "GET", path: "/permits/live?ids=" + pid, b: b}); r.StatusCode != http.StatusNoContent {
		t.Fatalf("unchanged list: %d", r.StatusCode)
	}
	badge := f.get(t, b, "/nav/pending/live?title=Permits")
	if !strings.Contains(badge, "<title>(1) Permits · Hearth control panel</title>") || !strings.Contains(badge, `data-testid="nav-pending-count"`) {
		t.Fatalf("badge poll: %s", badge)
	}
	if badge := f.get(t, b, "/nav/pending/live?title=<script>"); !strings.Contains(badge, "<title>(1) Hearth · Hearth control panel</title>") {
		t.Fatalf("badge poll with an unknown title: %s", badge)
	}
}

// TestSetupStepRefusals: Connect before its steps says which step comes
// first, in its card; a tunnel ID field holding something else (a key
// pasted in the wrong field) is refused without echoing it.
func TestSetupStepRefusals(t *testing.T) {
	dir := besideHearth(t)
	f := newFixtureWith(t, nil, func(o *app.Options) { o.TunnelProgramDir = dir })
	b := f.login(t)
	if r := f.post(t, b, "/setup/connect"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("connect: %d", r.StatusCode)
	}
	page := f.get(t, b, "/setup")
	card := page[strings.Index(page, `id="step-connect"`):]
	if !strings.Contains(card[:strings.Index(card, "</li>")], "Connect needs the tunnel key first (step 2).") {
		t.Errorf("Connect before the key is not explained in its card:\n%s", page)
	}
	if f.in.App.Tunnel.Running() {
		t.Fatal("Connect started the tunnel without a key")
	}
	secret := newRuntimeKey(t)
	f.post(t, b, "/setup/tunnel-id", "tunnel_id", secret)
	page = f.get(t, b, "/setup")
	if strings.Contains(page, secret) || !strings.Contains(page, "A tunnel ID starts with tunnel_") {
		t.Errorf("a key in the tunnel ID field: echoed or not explained:\n%s", page)
	}
	if id := f.in.App.Tunnel.Config().TunnelID; id != "" {
		t.Fatalf("a refused tunnel ID was saved: %q", id)
	}
	f.post(t, b, "/setup/tunnel-id", "tunnel_id", "  "+setupTunnelID+" ")
	if id := f.in.App.Tunnel.Config().TunnelID; id != setupTunnelID {
		t.Fatalf("tunnel ID saved as %q", id)
	}
}
