//go:build !windows

package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

const hostInfoCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"machine","arguments":{"operation":"host_info"},"_meta":{"hearth/conversation":"bench"}}}`

func post(b testing.TB, client *http.Client, url, body string) {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

// BenchmarkRoundTrip compares a machine.host_info call through Hearth's
// real HTTP handler (with a conversation mailbox) with the same HTTP
// client against a bare net/http JSON echo handler, in one run:
//
//	go test -run '^$' -bench RoundTrip -count 6 ./internal/mcpserver/ | benchstat -
func BenchmarkRoundTrip(b *testing.B) {
	client := &http.Client{}
	b.Run("hearth_host_info", func(b *testing.B) {
		in := hearthtest.Start(b, nil)
		post(b, client, in.URL, hostInfoCall)
		b.ResetTimer()
		for b.Loop() {
			post(b, client, in.URL, hostInfoCall)
		}
	})
	// The go-sdk alone: the same stateless JSON handler with one trivial
	// tool, no Hearth. This is the floor Hearth's own work sits on.
	b.Run("sdk_bare_tool", func(b *testing.B) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: "machine", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StructuredContent: json.RawMessage(`{"state":"completed"}`)}, nil
		})
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
		ts := httptest.NewServer(h)
		defer ts.Close()
		b.ResetTimer()
		for b.Loop() {
			post(b, client, ts.URL, hostInfoCall)
		}
	})
	b.Run("bare_echo", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
		}))
		defer srv.Close()
		b.ResetTimer()
		for b.Loop() {
			post(b, client, srv.URL, hostInfoCall)
		}
	})
}

// BenchmarkExecTrue compares machine.exec of `true` through Hearth with
// exec.Command("true").Run().
func BenchmarkExecTrue(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true")
	}
	client := &http.Client{}
	b.Run("hearth_exec", func(b *testing.B) {
		in := hearthtest.Start(b, hearthtest.Trusted)
		call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"machine","arguments":{"operation":"exec","command":"` + truePath + `"}}}`
		b.ResetTimer()
		for b.Loop() {
			post(b, client, in.URL, call)
		}
	})
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(truePath).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
