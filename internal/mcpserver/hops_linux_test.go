//go:build linux

package mcpserver_test

import (
	"flag"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

var (
	hopsPath  = flag.String("hops.path", "", "TestOneCallsCode: the path measured, fast or sdk")
	hopsCalls = flag.Int("hops.calls", 0, "TestOneCallsCode: calls made after the warm-up (0 or 1)")
)

// TestOneCallsCode makes three warm-up fs.stat calls on one path (the
// fast path, or every request through the SDK) and then -hops.calls more:
// the coverage counts of a run with one more call, less those of a run
// with none, are what one call runs, file by file and function by
// function (scripts/callhops; docs/ARCHITECTURE.md, "One call's way").
func TestOneCallsCode(t *testing.T) {
	if *hopsPath == "" {
		t.Skip("a measurement: scripts/callhops runs it")
	}
	client := &http.Client{}
	in := hearthtest.Start(t, nil)
	call := statCall(statFile(t, in.Root))
	// Both paths on a plain test listener, so that only the handler differs.
	h := in.App.MCP.Handler()
	if *hopsPath == "sdk" {
		h = mcpserver.SDKOnlyHandler(in.App.MCP)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for range 3 + *hopsCalls {
		post(t, client, srv.URL+"/mcp", call)
	}
}
