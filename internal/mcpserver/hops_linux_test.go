//go:build linux

package mcpserver_test

import (
	"flag"
	"net/http"
	"net/http/httptest"
	"runtime/coverage"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

var hopsDir = flag.String("hops.dir", "", "TestOneCallsCode: the directory the code one call runs is written to")

// TestOneCallsCode writes the coverage of exactly one fs.stat call, on the
// fast path and on the SDK path, into -hops.dir (fast/ and sdk/): what one
// call runs, file by file and function by function, for
// docs/ARCHITECTURE.md's "One call's way". It runs only in a build with
// coverage (atomic counters, which can be cleared):
//
//	go test -count 1 -covermode atomic -coverpkg ./internal/... -run TestOneCallsCode ./internal/mcpserver/ -args -hops.dir "$PWD/hops"
//	go tool covdata textfmt -i hops/fast -o fast.txt && go tool cover -func fast.txt | grep -v '0.0%$'
func TestOneCallsCode(t *testing.T) {
	if *hopsDir == "" || testing.CoverMode() != "atomic" {
		t.Skip("measures with -covermode atomic and -hops.dir only")
	}
	client := &http.Client{}
	in := hearthtest.Start(t, nil)
	call := statCall(statFile(t, in.Root))
	sdkPath := httptest.NewServer(mcpserver.SDKOnlyHandler(in.App.MCP))
	t.Cleanup(sdkPath.Close)
	for _, c := range []struct{ name, url string }{{"fast", in.URL}, {"sdk", sdkPath.URL + "/mcp"}} {
		// Warm: the first call of each path opens what later calls reuse.
		for range 3 {
			post(t, client, c.url, call)
		}
		if err := coverage.ClearCounters(); err != nil {
			t.Fatal(err)
		}
		post(t, client, c.url, call)
		dir := *hopsDir + "/" + c.name
		if err := coverage.WriteMetaDir(dir); err != nil {
			t.Fatal(err)
		}
		if err := coverage.WriteCountersDir(dir); err != nil {
			t.Fatal(err)
		}
	}
}
