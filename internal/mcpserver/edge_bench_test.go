package mcpserver

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// edgeTaker is a callHandler that asks the fast path whether it would
// answer the request (take) and counts the requests it would.
type edgeTaker struct {
	f     *fastPath
	taken *int
}

func (e edgeTaker) serveWire(w http.ResponseWriter, r *http.Request, wire wireRequest) {
	if e.f.take(r, &wire) {
		*e.taken++
	}
}

// BenchmarkEdgeRead is what the HTTP edge does with one tools/call before
// the engine sees it, without HTTP or the call itself: fingerprint's
// reading of the body (its checks, its split, its fingerprint) and the
// fast path's decision (take). fs_stat is BenchmarkReadCall's body;
// modern is the 2026-07-28 wire's, whose _meta carries the client's info
// and capabilities; a tools/list goes to the SDK.
func BenchmarkEdgeRead(b *testing.B) {
	const path = `"/home/user/notes.txt"`
	bodies := []struct {
		name, body, protocol string
		fast                 bool
	}{
		{"fs_stat", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","arguments":{"operation":"stat","path":` + path + `},"_meta":{"hearth/conversation":"bench"}}}`, "2025-06-18", true},
		{"modern", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","arguments":{"operation":"stat","path":` + path + `},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"hearth/conversation":"bench"}}}`, "2026-07-28", true},
		{"tools_list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "2025-06-18", false},
	}
	for _, c := range bodies {
		b.Run(c.name, func(b *testing.B) {
			f := &fastPath{tools: map[string]string{"fs": "fs"}, protocols: []string{"2025-06-18", "2026-07-28"}}
			taken := 0
			h := (&Server{}).fingerprint(edgeTaker{f: f, taken: &taken})
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			r.Header.Set("Mcp-Protocol-Version", c.protocol)
			r.Header.Set("Mcp-Method", "tools/call")
			r.Header.Set("Mcp-Name", "fs")
			body := []byte(c.body)
			w := httptest.NewRecorder()
			reader := bytes.NewReader(body)
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				reader.Reset(body)
				r.Body, r.ContentLength = io.NopCloser(reader), int64(len(body))
				h.ServeHTTP(w, r)
				n++
			}
			if want := map[bool]int{true: n, false: 0}[c.fast]; taken != want || w.Code != http.StatusOK {
				b.Fatalf("taken %d of %d, status %d", taken, n, w.Code)
			}
		})
	}
}
