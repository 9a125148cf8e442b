package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestEndpointRoutesAsTheMux: the handler's shortcut to the endpoint for
// /mcp answers every path as the mux it stands in front of would: /mcp and
// its escaped spelling reach the endpoint, other spellings and paths get
// the mux's redirect or 404, discovery paths their JSON 404.
func TestEndpointRoutesAsTheMux(t *testing.T) {
	in := hearthtest.Start(t, nil)
	h := in.App.MCP.Handler()
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, tc := range []struct {
		method, path string
		status       int
		body         string // a part of the answer
	}{
		{"POST", "/mcp", 200, `"result"`},
		{"POST", "/m%63p", 200, `"result"`},
		{"GET", "/mcp", http.StatusMethodNotAllowed, ""},
		{"POST", "//mcp", http.StatusTemporaryRedirect, ""},
		{"POST", "/x/../mcp", http.StatusTemporaryRedirect, ""},
		{"POST", "/mcp/", 404, ""},
		{"POST", "/MCP", 404, ""},
		{"POST", "/", 404, ""},
		{"GET", "/.well-known/oauth-protected-resource", 404, `"not_found"`},
	} {
		req := httptest.NewRequest(tc.method, "http://127.0.0.1:3000"+tc.path, strings.NewReader(ping))
		req.Host = "127.0.0.1:3000"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.body) {
			t.Errorf("%s %s: %d %s, want %d with %s", tc.method, tc.path, rec.Code, rec.Body, tc.status, tc.body)
		}
	}
}
