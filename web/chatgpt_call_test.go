package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// TestLocalOpenAISessionIsNotChatGPT: a local program's MCP call that
// carries _meta["openai/session"] (any program can send that key) leaves
// Setup without "ChatGPT reached Hearth": only calls over a connection of
// the tunnel-client Hearth runs count. The tunnel is connected and ready
// (the FAKE tunnel-client, told not to forward a call), so the step waits
// for exactly that call.
func TestLocalOpenAISessionIsNotChatGPT(t *testing.T) {
	dir := besideHearth(t)
	f := newFixtureWith(t, nil, func(o *app.Options) { o.TunnelProgramDir = dir })
	b := f.login(t)
	f.post(t, b, "/setup/key", "key", newRuntimeKey(t))
	f.post(t, b, "/setup/tunnel-id", "tunnel_id", setupTunnelID)
	f.post(t, b, "/setup/connect")
	waitTunnel(t, f, "ready", func(st tunnel.Status) bool { return st.State == tunnel.StateReady })

	c := hearthtest.Connect(t, f.in.URL, "")
	for i := range 3 {
		r, err := c.TryCall("machine", map[string]any{"operation": "host_info"}, map[string]any{"openai/session": "local-pretender"})
		if err != nil {
			t.Fatalf("local call %d: %v", i, err)
		}
		if r.State() != "completed" {
			t.Fatalf("local call %d: %s", i, r.Raw)
		}
	}
	// The callback runs before the answer: nothing is pending now.
	time.Sleep(100 * time.Millisecond)
	if at := f.in.App.Tunnel.FirstChatGPTCall(); !at.IsZero() {
		t.Fatalf("a local call with openai/session was taken for ChatGPT's first call (%v)", at)
	}
	page := f.get(t, b, "/setup")
	if strings.Contains(page, `data-testid="first-call-seen"`) || strings.Contains(page, "ChatGPT reached Hearth") {
		t.Fatalf("Setup says ChatGPT reached Hearth after a local call:\n%s", mainText(page))
	}
	if !strings.Contains(page, `data-testid="first-call-waiting"`) {
		t.Errorf("Setup does not wait for ChatGPT's first call:\n%s", mainText(page))
	}
}
