//go:build !windows

package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/dispatch/dispatchtest"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// trusted runs exec without permits (kill still needs one), so these tests
// exercise the spine; governance has its own tests.
var trusted = hearthtest.Trusted

func TestDiscoverListTools(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "")
	if got := c.Session.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Fatalf("negotiated protocol %q, want 2026-07-28", got)
	}
	res, err := c.Session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		names[tl.Name] = tl
		raw, _ := json.Marshal(tl.InputSchema)
		var sch map[string]any
		if err := json.Unmarshal(raw, &sch); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf"} {
			if _, ok := sch[k]; ok {
				t.Errorf("tool %s: top-level %s in advertised schema", tl.Name, k)
			}
		}
		if sch["type"] != "object" || sch["additionalProperties"] != false {
			t.Errorf("tool %s: schema must be a closed object: %s", tl.Name, raw)
		}
		if req, _ := sch["required"].([]any); len(req) != 1 || req[0] != "operation" {
			t.Errorf("tool %s: required = %v, want [operation]", tl.Name, sch["required"])
		}
		if _, ok := hearthtest.Get(sch, "properties.operation.enum").([]any); !ok {
			t.Errorf("tool %s: operation is not an enum", tl.Name)
		}
		if _, ok := hearthtest.Get(sch, "properties.detach").(map[string]any); !ok {
			t.Errorf("tool %s: detach not accepted", tl.Name)
		}
	}
	for _, want := range []string{"machine", "artifact"} {
		if names[want] == nil {
			t.Fatalf("tools/list lacks %s", want)
		}
	}
	if a := names["artifact"].Annotations; a == nil || !a.ReadOnlyHint || !a.IdempotentHint {
		t.Errorf("artifact must carry readOnlyHint and idempotentHint: %+v", a)
	}
	if a := names["machine"].Annotations; a != nil && a.ReadOnlyHint {
		t.Errorf("machine must not claim readOnlyHint")
	}
	all, _ := json.Marshal(res.Tools)
	if len(all) > 40000 {
		t.Errorf("tools/list is %d bytes, budget is 40000", len(all))
	}
	t.Logf("tools/list: %d tools, %d bytes", len(res.Tools), len(all))
}

func TestLegacyProtocolVersions(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		t.Run(v, func(t *testing.T) {
			c := hearthtest.ConnectVersion(t, in.URL, "", v)
			if got := c.Session.InitializeResult().ProtocolVersion; got != v {
				t.Fatalf("negotiated %q, want %q", got, v)
			}
			r := c.Call("machine", map[string]any{"operation": "host_info"})
			if r.State() != "completed" || r.Get("result.os") != runtime.GOOS {
				t.Fatalf("host_info: %s", r.Raw)
			}
		})
	}
}

func TestMachineOperations(t *testing.T) {
	// A long inline budget: these calls are checked as inline answers, which
	// a loaded machine must not turn into pending futures.
	in := hearthtest.Start(t, func(c *config.Config) { trusted(c); c.DispatchInlineBudgetMS = 30_000 })
	c := hearthtest.Connect(t, in.URL, "ops")

	r := c.Call("machine", map[string]any{"operation": "host_info"})
	if r.State() != "completed" || r.Get("result.pid") != float64(os.Getpid()) || r.Get("result.policy_mode") != "trusted" {
		t.Fatalf("host_info: %s", r.Raw)
	}
	if !strings.Contains(r.Text, "machine.host_info: completed") {
		t.Errorf("text rendering lacks the summary: %q", r.Text)
	}

	r = c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"a b", `"q"`, ""}})
	if r.State() != "completed" || r.Get("result.stdout.text") != "a b \"q\" \n" || r.Get("result.exit_code") != float64(0) {
		t.Fatalf("exec: %s", r.Raw)
	}
	r = c.Call("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "echo $HEARTH_X; pwd; exit 3"},
		"env": map[string]string{"HEARTH_X": "v1"}, "cwd": in.Home})
	home, _ := filepath.EvalSymlinks(in.Home)
	if r.Get("result.exit_code") != float64(3) || r.Get("result.stdout.text") != "v1\n"+home+"\n" {
		t.Fatalf("exec env/cwd/exit: %s", r.Raw)
	}
	r = c.Call("machine", map[string]any{"operation": "exec", "command": "no-such-program-hearth"})
	if !r.IsError || r.State() != "failed" || !strings.Contains(r.Text, "no-such-program-hearth") {
		t.Fatalf("missing program: %s", r.Raw)
	}

	r = c.Call("machine", map[string]any{"operation": "process_list"})
	found := false
	for _, p := range r.Get("result.processes").([]any) {
		if hearthtest.Get(p, "pid") == float64(os.Getpid()) {
			found = true
		}
	}
	if !found {
		t.Fatalf("process_list lacks Hearth's own pid")
	}

	r = c.Call("machine", map[string]any{"operation": "process_kill", "pid": os.Getpid()})
	if !r.IsError || r.State() != "blocked" {
		t.Fatalf("killing Hearth itself must be refused: %s", r.Raw)
	}
	victim := startSleeper(t)
	r = c.Call("machine", map[string]any{"operation": "process_kill", "pid": victim.Process.Pid})
	if r.State() != "pending" || r.Get("permit_id") == nil {
		t.Fatalf("process_kill needs a permit even in trusted mode: %s", r.Raw)
	}
	if err := in.App.Operator.Approve(context.Background(), r.Get("permit_id").(string), "tester", nil); err != nil {
		t.Fatal(err)
	}
	arr := c.WaitArrival(r.Get("future_id").(string), r)
	if hearthtest.Get(arr, "envelope.state") != "completed" {
		t.Fatalf("approved process_kill: %v", arr)
	}
	if err := victim.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("victim not killed: %v", err)
	}
}

func TestStrictValidationNamesFieldAndOperation(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "")
	cases := []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"operation": "exec", "command": "echo", "bogus": 1}, []string{`"bogus"`, "exec", "command"}},
		{map[string]any{"operation": "exec"}, []string{`"command"`, "required", "exec"}},
		{map[string]any{"operation": "exec", "command": 5}, []string{`"command"`, "string"}},
		{map[string]any{"operation": "exec", "command": "x", "args": []any{"a", 2}}, []string{`"args[1]"`, "string"}},
		{map[string]any{"operation": "host_info", "command": "x"}, []string{`"command"`, "host_info"}},
		{map[string]any{"operation": "fly"}, []string{`"fly"`, "host_info", "exec"}},
		{map[string]any{}, []string{`"operation"`, "required"}},
		{map[string]any{"operation": "batch", "commands": []any{map[string]any{"command": "x", "shell": true}}}, []string{`commands[0].shell`}},
		{map[string]any{"operation": "process_kill", "pid": 0}, []string{`"pid"`, "at least 1"}},
		{map[string]any{"operation": "exec", "command": "x", "detach": "yes"}, []string{`"detach"`}},
	}
	for _, tc := range cases {
		r := c.Call("machine", tc.args)
		if !r.IsError || r.State() != "failed" || r.Get("error.code") != "invalid_input" {
			t.Errorf("%v: want invalid_input, got %s", tc.args, r.Raw)
			continue
		}
		msg, _ := r.Get("error.message").(string)
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: message %q lacks %q", tc.args, msg, w)
			}
		}
	}
}

func startSleeper(t *testing.T) *osProcess {
	t.Helper()
	p, err := os.StartProcess("/bin/sleep", []string{"sleep", "30"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(); p.Wait() })
	return &osProcess{p}
}

type osProcess struct{ Process *os.Process }

func (p *osProcess) Wait() error {
	st, err := p.Process.Wait()
	if err != nil {
		return err
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Errorf("killed by %v", ws.Signal())
	}
	return nil
}

func TestDetachedResultArrivesOnlyInItsConversation(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	a := hearthtest.Connect(t, in.URL, "conv-a")
	b := hearthtest.Connect(t, in.URL, "conv-b")
	// a's work outlasts its own submitting response, so its arrival waits
	// in the mailbox, unread by a, while b works.
	r := a.Call("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "sleep 0.3; echo from-a"}, "detach": true})
	if r.State() != "pending" || r.Get("future_id") == nil {
		t.Fatalf("detach must answer pending with a future id: %s", r.Raw)
	}
	if len(r.Arrivals()) != 0 {
		t.Fatalf("a's submitting response already carries arrivals: %s", r.Raw)
	}
	fidA := r.Get("future_id").(string)
	deadline := time.Now().Add(20 * time.Second)
	for {
		f, err := in.App.Dispatcher.GetFuture(context.Background(), r0route(t, in, fidA), fidA)
		if err == nil && f.State == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a's future did not complete: %v %v", f, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// a's arrival now waits in a mailbox. b submits and polls until its own
	// result arrives; were the two conversations one mailbox, a's arrival
	// (queued first) would be offered to b on the way.
	rb := b.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"from-b"}, "detach": true})
	fidB, _ := rb.Get("future_id").(string)
	if fidB == "" {
		t.Fatalf("b's detached call: %s", rb.Raw)
	}
	arrB := awaitOwnArrival(t, b, fidB, rb, fidA)
	if hearthtest.Get(arrB, "envelope.result.stdout.text") != "from-b\n" {
		t.Fatalf("b's arrival: %v", arrB)
	}
	// a's arrival was left for a; a is offered nothing of b's.
	arrA := awaitOwnArrival(t, a, fidA, nil, fidB)
	if hearthtest.Get(arrA, "envelope.state") != "completed" || hearthtest.Get(arrA, "envelope.result.stdout.text") != "from-a\n" {
		t.Fatalf("a's arrival after b's work: %v", arrA)
	}
	// Acknowledged by the next distinct call: not offered again.
	for range 2 {
		r := a.Call("machine", map[string]any{"operation": "host_info"})
		for _, arr := range r.Arrivals() {
			if arr["future_id"] == fidA {
				t.Fatalf("acknowledged arrival offered again: %s", r.Raw)
			}
		}
	}
}

// awaitOwnArrival polls c (starting with the response first, if any) until
// the arrival of want comes, and fails if c is offered foreign's arrival or
// any arrival of a future c was not answered with itself. (On a loaded
// machine even host_info may overrun the inline budget and arrive later;
// those are c's own.)
func awaitOwnArrival(t *testing.T, c *hearthtest.Client, want string, first *hearthtest.Result, foreign string) map[string]any {
	t.Helper()
	own := map[any]bool{want: true}
	deadline := time.Now().Add(30 * time.Second)
	r := first
	if r == nil {
		r = c.Call("machine", map[string]any{"operation": "host_info"})
	}
	for {
		if id, ok := r.Get("future_id").(string); ok {
			own[id] = true
		}
		var got map[string]any
		for _, arr := range r.Arrivals() {
			switch id := arr["future_id"]; {
			case id == foreign:
				t.Fatalf("conversation %s was offered another conversation's arrival %s: %s", c.Conversation, foreign, r.Raw)
			case !own[id]:
				t.Fatalf("conversation %s was offered an arrival it does not own: %s", c.Conversation, r.Raw)
			case id == want:
				got = arr
			}
		}
		if got != nil {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("conversation %s: no arrival for %s", c.Conversation, want)
		}
		time.Sleep(20 * time.Millisecond)
		r = c.Call("machine", map[string]any{"operation": "host_info"})
	}
}

func TestSlowCallGoesPendingAndArrivesInCompletionOrder(t *testing.T) {
	in := hearthtest.Start(t, func(c *config.Config) { trusted(c); hearthtest.ProductionBudget(c) })
	c := hearthtest.Connect(t, in.URL, "slow")
	// 5 s against 0.3 s: the fast call ends first even when a loaded
	// machine starts it seconds after the slow one (with 0.8 s it once
	// did not).
	slow := c.Call("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "sleep 5; echo slow"}})
	fast := c.Call("machine", map[string]any{"operation": "exec", "command": "sh", "args": []string{"-c", "sleep 0.3; echo fast"}})
	if slow.State() != "pending" || fast.State() != "pending" {
		t.Fatalf("calls over the 100 ms budget must go pending: %s / %s", slow.Raw, fast.Raw)
	}
	var got []string
	var seqs []float64
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < 2 && time.Now().Before(deadline) {
		r := c.Call("machine", map[string]any{"operation": "host_info"})
		for _, a := range r.Arrivals() {
			// On a loaded machine a host_info of this loop may outlast the
			// budget too; its own arrival is not one of the two.
			if id := a["future_id"]; id != slow.Get("future_id") && id != fast.Get("future_id") {
				continue
			}
			got = append(got, strings.TrimSpace(hearthtest.Get(a, "envelope.result.stdout.text").(string)))
			seqs = append(seqs, a["seq"].(float64))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Join(got, ",") != "fast,slow" || seqs[0] >= seqs[1] {
		t.Fatalf("arrivals %v (seq %v), want fast then slow in completion order", got, seqs)
	}
}

// rawCall posts one legacy-protocol tools/call with an explicit JSON-RPC id.
func rawCall(t *testing.T, url string, id int, conversation string) map[string]any {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"machine","arguments":{"operation":"host_info"},"_meta":{"hearth/conversation":%q}}}`, id, conversation)
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

func TestRetriedRequestReofferedThenAcknowledged(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "retry")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"x"}, "detach": true})
	fid := r.Get("future_id").(string)
	// Wait for completion without consuming the mailbox.
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, err := in.App.Dispatcher.GetFuture(context.Background(), r0route(t, in, fid), fid)
		if err == nil && f.State == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("future did not complete: %v %v", f, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	arrivals := func(m map[string]any) []any {
		a, _ := hearthtest.Get(m, "result.structuredContent.arrivals").([]any)
		return a
	}
	first := rawCall(t, in.URL, 41, "retry")
	if len(arrivals(first)) != 1 {
		t.Fatalf("first request: %v", first)
	}
	again := rawCall(t, in.URL, 41, "retry")
	if len(arrivals(again)) != 1 || hearthtest.Get(arrivals(again)[0], "future_id") != fid {
		t.Fatalf("a retry of the same request must be re-offered the batch: %v", again)
	}
	next := rawCall(t, in.URL, 42, "retry")
	if len(arrivals(next)) != 0 {
		t.Fatalf("the next distinct request acknowledges the batch: %v", next)
	}
	// The raw request id is never stored.
	db, _ := os.ReadFile(filepath.Join(in.Home, "hearth.db"))
	wal, _ := os.ReadFile(filepath.Join(in.Home, "hearth.db-wal"))
	if bytes.Contains(append(db, wal...), []byte(`"retry"`)) {
		t.Errorf("raw conversation id persisted")
	}
}

// r0route finds the stored route of a future (tests only).
func r0route(t *testing.T, in *hearthtest.Instance, fid string) string {
	return dispatchtest.Route(t, in.App.DB, fid)
}

func TestHostileHTTP(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"machine","arguments":{"operation":"exec","command":"` + strings.Repeat("a", 5<<20) + `"}}}`
	cases := []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     int
	}{
		{"foreign host", "POST", "/mcp", init, map[string]string{"Host": "evil.example.com"}, 403},
		{"foreign host with port", "POST", "/mcp", init, map[string]string{"Host": "evil.example.com:3000"}, 403},
		{"foreign origin", "POST", "/mcp", init, map[string]string{"Origin": "http://evil.example.com"}, 403},
		{"null origin", "POST", "/mcp", init, map[string]string{"Origin": "null"}, 403},
		{"loopback origin", "POST", "/mcp", init, map[string]string{"Origin": "http://localhost:1234"}, 200},
		{"get", "GET", "/mcp", "", nil, 405},
		{"put", "PUT", "/mcp", init, nil, 405},
		{"delete", "DELETE", "/mcp", "", nil, 405},
		{"unknown path", "POST", "/other", init, nil, 404},
		{"root", "GET", "/", "", nil, 404},
		{"oversized", "POST", "/mcp", big, nil, 413},
		{"json only accept", "POST", "/mcp", init, map[string]string{"Accept": "application/json"}, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, strings.TrimSuffix(in.URL, "/mcp")+tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.hdr {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	t.Run("malformed json", func(t *testing.T) {
		req, _ := http.NewRequest("POST", in.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), "-32700") {
			t.Fatalf("want a JSON-RPC parse error, got %d %s", resp.StatusCode, b)
		}
		// Still alive.
		c := hearthtest.Connect(t, in.URL, "")
		if r := c.Call("machine", map[string]any{"operation": "host_info"}); r.State() != "completed" {
			t.Fatalf("server unhealthy after malformed input: %s", r.Raw)
		}
	})
}

func TestExecTimeoutKillsTree(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "tree")
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "sh", "timeout_ms": 400,
		"args": []string{"-c", "sleep 60 & echo $! > " + pidFile + "; wait"}})
	var env map[string]any
	if r.State() == "pending" {
		env = c.WaitArrival(r.Get("future_id").(string), r)["envelope"].(map[string]any)
	} else {
		env = r.Env
	}
	if hearthtest.Get(env, "result.timed_out") != true {
		t.Fatalf("want timed_out: %v", env)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLargeOutputSpillsAndReadsBackByRange(t *testing.T) {
	in := hearthtest.Start(t, func(c *config.Config) { c.MaxOutputBytes = 1024; c.Policy.Mode = config.ModeTrusted })
	c := hearthtest.Connect(t, in.URL, "")
	// No conversation: the call is answered when it is done.
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "seq", "args": []string{"1", "20000"}})
	id, _ := r.Get("result.stdout.artifact.id").(string)
	if id == "" || len(r.Get("result.stdout.preview").(string)) > 1024 || r.Get("result.stdout.text") != nil {
		t.Fatalf("want preview + artifact: %s", r.Raw[:min(len(r.Raw), 600)])
	}
	var want strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if r.Get("result.stdout.bytes") != float64(want.Len()) {
		t.Fatalf("bytes = %v, want %d", r.Get("result.stdout.bytes"), want.Len())
	}
	var got strings.Builder
	offset := 0
	for {
		rr := c.Call("artifact", map[string]any{"operation": "range", "id": id, "offset": offset, "limit": 30000})
		if rr.State() != "completed" {
			t.Fatalf("range: %s", rr.Raw)
		}
		got.WriteString(rr.Get("result.data").(string))
		if rr.Get("result.eof") == true {
			break
		}
		offset = int(rr.Get("result.next_offset").(float64))
	}
	if got.String() != want.String() {
		t.Fatalf("artifact content differs (got %d bytes)", got.Len())
	}
	m := c.Call("artifact", map[string]any{"operation": "metadata", "id": id})
	if m.Get("result.size") != float64(want.Len()) {
		t.Fatalf("metadata: %s", m.Raw)
	}
	s := c.Call("artifact", map[string]any{"operation": "search", "id": id, "query": "19999"})
	if hearthtest.Get(s.Env, "result.matches.0.line") != float64(19999) {
		t.Fatalf("search: %s", s.Raw)
	}
	l := c.Call("artifact", map[string]any{"operation": "list"})
	if hearthtest.Get(l.Env, "result.artifacts.0.id") != id {
		t.Fatalf("list: %s", l.Raw)
	}
	b64 := c.Call("artifact", map[string]any{"operation": "read", "id": id, "limit": 4, "encoding": "base64"})
	if b64.Get("result.data") != "MQoyCg==" {
		t.Fatalf("base64 read: %s", b64.Raw)
	}
	nf := c.Call("artifact", map[string]any{"operation": "read", "id": "art_aaaaaaaaaaaaaaaaaaaa"})
	if !nf.IsError || nf.Get("error.code") != "not_found" {
		t.Fatalf("unknown artifact: %s", nf.Raw)
	}
}

// barrier is a batch item's script: it marks itself running in dir, then
// waits (up to about 10 s) until all n items have marked themselves, and
// says whether it saw them all at once.
const barrier = `d=$1; me=$2; n=$3; touch "$d/$me"; i=0
while [ $i -lt 200 ]; do
  set -- "$d"/*
  if [ $# -ge $n ]; then echo "all $me"; exit 0; fi
  i=$((i+1)); sleep 0.05
done
echo "only $# of $n running"; exit 1`

func TestBatchRunsConcurrently(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	c := hearthtest.Connect(t, in.URL, "batch")
	dir := t.TempDir()
	cmds := make([]any, 16)
	for i := range cmds {
		cmds[i] = map[string]any{"command": "sh", "args": []string{"-c", barrier, "sh", dir, strconv.Itoa(i), "16"}}
	}
	start := time.Now()
	r := c.Call("machine", map[string]any{"operation": "batch", "commands": cmds})
	env := settled(c, r)
	wall := time.Since(start)
	// Each item passes the barrier only while all 16 run at once: any cap
	// below 16 leaves the first items waiting until they give up.
	results, _ := hearthtest.Get(env, "result.results").([]any)
	if len(results) != 16 {
		t.Fatalf("batch: %v", env)
	}
	for i, it := range results {
		if got := hearthtest.Get(it, "result.stdout.text"); got != fmt.Sprintf("all %d\n", i) {
			t.Fatalf("item %d did not see all 16 commands running at once (%v): %v", i, got, it)
		}
	}
	t.Logf("batch of 16 met at the barrier in %v", wall)
	r = c.Call("machine", map[string]any{"operation": "batch", "commands": make([]any, 17)})
	if !r.IsError || !strings.Contains(r.Get("error.message").(string), "at most 16") {
		t.Fatalf("17 commands must be refused: %s", r.Raw)
	}
}

// settled returns r's envelope, or when r went pending (over the inline
// budget) the envelope of its arrival.
func settled(c *hearthtest.Client, r *hearthtest.Result) map[string]any {
	if r.State() != "pending" {
		return r.Env
	}
	env, _ := c.WaitArrival(r.Get("future_id").(string), r)["envelope"].(map[string]any)
	return env
}

// TestMaxConcurrentExecLimitsCommands runs a batch of 4 under
// max_concurrent_exec 2: each command marks itself running in a directory
// and counts the marks when it starts and before it ends, so the counts
// show how many ran at once.
func TestMaxConcurrentExecLimitsCommands(t *testing.T) {
	in := hearthtest.Start(t, func(c *config.Config) { c.Policy.Mode = config.ModeTrusted; c.MaxConcurrentExec = 2 })
	c := hearthtest.Connect(t, in.URL, "capped")
	if env := settled(c, c.Call("machine", map[string]any{"operation": "host_info"})); hearthtest.Get(env, "result.limits.max_concurrent_exec") != float64(2) {
		t.Fatalf("host_info limits: %v", env)
	}
	dir := t.TempDir()
	const script = `d=$1; me=$2; touch "$d/$me"; set -- "$d"/*; a=$#; sleep 0.5; set -- "$d"/*; b=$#; rm "$d/$me"; echo "$a $b"`
	cmds := make([]any, 4)
	for i := range cmds {
		cmds[i] = map[string]any{"command": "sh", "args": []string{"-c", script, "sh", dir, strconv.Itoa(i)}}
	}
	start := time.Now()
	r := c.Call("machine", map[string]any{"operation": "batch", "commands": cmds})
	env := settled(c, r)
	wall := time.Since(start)
	results, _ := hearthtest.Get(env, "result.results").([]any)
	if len(results) != 4 {
		t.Fatalf("batch: %v", env)
	}
	most := 0
	for i, it := range results {
		var a, b int
		text, _ := hearthtest.Get(it, "result.stdout.text").(string)
		if _, err := fmt.Sscanf(text, "%d %d", &a, &b); err != nil {
			t.Fatalf("item %d: %v", i, it)
		}
		most = max(most, a, b)
	}
	if most > 2 {
		t.Fatalf("%d commands ran at once under max_concurrent_exec 2", most)
	}
	if most < 2 {
		t.Fatalf("commands ran one at a time under max_concurrent_exec 2")
	}
	// Two rounds of 0.5 s at least.
	if wall < time.Second {
		t.Fatalf("4 × 0.5 s two at a time took only %v", wall)
	}
	t.Logf("4 × 0.5 s under max_concurrent_exec 2 took %v", wall)
}

func TestConcurrentConversationsIsolated(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		conv := fmt.Sprintf("c%d", i)
		c := hearthtest.Connect(t, in.URL, conv)
		wg.Go(func() {
			r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{conv}, "detach": true})
			arr := c.WaitArrival(r.Get("future_id").(string), r)
			if hearthtest.Get(arr, "envelope.result.stdout.text") != conv+"\n" {
				t.Errorf("%s got %v", conv, arr)
			}
		})
	}
	wg.Wait()
}

func TestLargeDetachedResultSpillsToArtifact(t *testing.T) {
	in := hearthtest.Start(t, func(c *config.Config) { c.Policy.Mode = config.ModeTrusted; c.MaxResultBytes = 1024 })
	c := hearthtest.Connect(t, in.URL, "spill")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": "seq", "args": []string{"1", "2000"}, "detach": true})
	arr := c.WaitArrival(r.Get("future_id").(string), r)
	id, _ := hearthtest.Get(arr, "envelope.artifact.id").(string)
	if id == "" || hearthtest.Get(arr, "envelope.result.spilled") != true || hearthtest.Get(arr, "envelope.state") != "completed" {
		t.Fatalf("a result over max_result_bytes must arrive as an artifact: %v", arr)
	}
	rr := c.Call("artifact", map[string]any{"operation": "read", "id": id, "limit": 1 << 20})
	var full map[string]any
	if err := json.Unmarshal([]byte(rr.Get("result.data").(string)), &full); err != nil {
		t.Fatalf("spilled result is not the JSON envelope: %v", err)
	}
	if !strings.HasPrefix(hearthtest.Get(full, "result.stdout.text").(string), "1\n2\n3\n") {
		t.Fatalf("spilled envelope: %v", full)
	}
}
