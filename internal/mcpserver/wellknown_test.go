package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestWellKnownJSON404: OAuth discovery probes (tunnel-client sends them)
// get a JSON 404, not a plain-text one it reports as invalid metadata.
func TestWellKnownJSON404(t *testing.T) {
	in := hearthtest.Start(t, nil)
	base := strings.TrimSuffix(in.URL, "/mcp")
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var v map[string]any
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || json.Unmarshal(b, &v) != nil || v["error"] != "not_found" {
			t.Errorf("GET %s: %d %q %s, want a JSON 404", p, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
}
