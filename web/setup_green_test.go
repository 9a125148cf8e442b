package web_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// TestConnectShowsNothingGreenBeforeOpenAIAccepts walks Connect over a
// real Hearth and the FAKE tunnel-client with a key its control plane
// refuses: from the answer to Connect until the refusal shows, the page
// has no green line and no "Started" (nothing is done until OpenAI
// accepted the key), and once the refusal is in, still none. With a key
// it accepts, the step shows done once the connection is ready.
func TestConnectShowsNothingGreenBeforeOpenAIAccepts(t *testing.T) {
	fake := fakeTunnelClient(t)
	bad, good := newRuntimeKey(t), newRuntimeKey(t)
	refused := filepath.Join(t.TempDir(), "refused-keys")
	if err := os.WriteFile(refused, []byte(bad+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_TUNNEL_REFUSE_KEYS", refused)
	f := newFixture(t, func(c *config.Config) { c.Tunnel.ClientPath = fake })
	b := f.login(t)
	// post posts a form and follows its redirect, as the browser does.
	post := func(path string, kv ...string) string {
		t.Helper()
		r := f.post(t, b, path, kv...)
		if r.StatusCode != http.StatusSeeOther {
			t.Fatalf("POST %s: %d\n%s", path, r.StatusCode, r.body)
		}
		return f.get(t, b, r.Header.Get("Location"))
	}
	green := func(what, page string) {
		t.Helper()
		for _, g := range []string{`data-ok="true"`, `class="flash ok"`, "✓ Check the connection", "Started."} {
			if strings.Contains(page, g) {
				t.Errorf("%s: the page shows %q before OpenAI accepted the key", what, g)
			}
		}
	}
	post("/setup/pin", "client_path", fake, "client_sha256", fileSum(t, fake))
	post("/setup/key", "key", bad)
	post("/setup/tunnel-id", "tunnel_id", setupTunnelID)
	page := post("/setup/connect")
	green("right after Connect", page)
	if !strings.Contains(page, `data-ok="waiting"`) {
		t.Errorf("right after Connect the progress does not say it waits for OpenAI:\n%s", page)
	}
	waitTunnel(t, f, "key refused", func(st tunnel.Status) bool { return st.State == tunnel.StateKeyRefused })
	page = f.get(t, b, "/setup")
	green("with the key refused", page)
	if !strings.Contains(page, `data-testid="key-refused"`) {
		t.Errorf("the refusal does not show:\n%s", page)
	}

	post("/setup/key", "key", good)
	post("/setup/connect")
	waitTunnel(t, f, "ready", func(st tunnel.Status) bool { return st.State == tunnel.StateReady })
	if page := f.get(t, b, "/setup"); !strings.Contains(page, `id="step-connect" data-testid="step-connect" data-step-state="done"`) {
		t.Errorf("accepted, the connect step is not done:\n%s", page)
	}
}
