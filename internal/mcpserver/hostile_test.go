//go:build !windows

package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// rawPost sends one raw POST to the MCP endpoint.
func rawPost(t *testing.T, url, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	for k, v := range hdr {
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
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func nested(depth int) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"machine","arguments":{"operation":"host_info","x":` +
		strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}}`
}

func TestEveryPOSTErrorIsJSONRPC(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"machine","arguments":{"operation":"host_info"}}}`
	cases := []struct {
		name, body string
		hdr        map[string]string
		code       float64
		id         any
	}{
		{"nested 1000", nested(1000), nil, -32700, nil},
		{"nested 9990", nested(9990), nil, -32700, nil},
		{"unknown method", `{"jsonrpc":"2.0","id":5,"method":"no/such","params":{}}`, nil, -32601, 5.0},
		{"bare null", `null`, nil, -32600, nil},
		{"bare number", `42`, nil, -32600, nil},
		{"bare string", `"x"`, nil, -32600, nil},
		{"batch", `[` + call + `,` + call + `]`, nil, -32600, nil},
		{"empty batch", `[]`, nil, -32600, nil},
		{"empty body", ``, nil, -32700, nil},
		{"not json", `{"jsonrpc":`, nil, -32700, nil},
		{"no method", `{"jsonrpc":"2.0","id":3}`, nil, -32600, nil},
		{"tools/call without params", `{"jsonrpc":"2.0","id":4,"method":"tools/call"}`, nil, -32600, 4.0},
		{"foreign host", init, map[string]string{"Host": "evil.example.com"}, -32600, nil},
		{"foreign origin", init, map[string]string{"Origin": "http://evil.example.com"}, -32600, nil},
		{"oversized", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"machine","arguments":{"operation":"exec","command":"` + strings.Repeat("a", 5<<20) + `"}}}`, nil, -32600, nil},
		{"wrong content type", init, map[string]string{"Content-Type": "text/plain"}, -32600, nil},
		{"bad protocol header", init, map[string]string{"MCP-Protocol-Version": "1999-01-01"}, -32600, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := rawPost(t, in.URL, tc.body, tc.hdr)
			if resp.StatusCode < 400 {
				t.Fatalf("status %d for an error case: %s", resp.StatusCode, b)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("Content-Type %q, body %q: not a JSON-RPC error", ct, b)
			}
			var m struct {
				JSONRPC string `json:"jsonrpc"`
				ID      any    `json:"id"`
				Error   *struct {
					Code    float64 `json:"code"`
					Message string  `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &m); err != nil || m.JSONRPC != "2.0" || m.Error == nil {
				t.Fatalf("not a JSON-RPC error object (%v): %s", err, b)
			}
			if m.Error.Code != tc.code || m.Error.Message == "" {
				t.Fatalf("code %v (%q), want %v", m.Error.Code, m.Error.Message, tc.code)
			}
			if tc.id != nil && m.ID != tc.id {
				t.Fatalf("id %v, want %v", m.ID, tc.id)
			}
		})
	}
	// Ordinary calls still work.
	resp, b := rawPost(t, in.URL, call, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"completed"`) {
		t.Fatalf("an ordinary call after the hostile ones: %d %s", resp.StatusCode, b)
	}
}

// toolError posts a tools/call with raw arguments and returns its envelope.
func toolError(t *testing.T, url, args string) map[string]any {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"` + args[:strings.Index(args, "|")] + `","arguments":` + args[strings.Index(args, "|")+1:] + `}}`
	resp, b := rawPost(t, url, body, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	env, _ := hearthtest.Get(m, "result.structuredContent").(map[string]any)
	if env == nil {
		t.Fatalf("no envelope: %s", b)
	}
	return env
}

func TestInvalidUTF8RefusedNamingTheField(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	root := in.Root
	bad := "\xff\xfe\xc3("
	cases := []struct {
		name, args, field string
	}{
		{"fs.write path", `fs|{"operation":"write","path":"` + root + `/` + bad + `.txt","data":"x"}`, `"path"`},
		{"fs.write data bytes", `fs|{"operation":"write","path":"` + root + `/a.txt","data":"ok` + bad + `"}`, `"data"`},
		{"fs.write data lone surrogate", `fs|{"operation":"write","path":"` + root + `/b.txt","data":"x\ud800y"}`, `"data"`},
		{"fs.write data lone low surrogate", `fs|{"operation":"write","path":"` + root + `/c.txt","data":"x\udc00"}`, `"data"`},
		{"exec args", `machine|{"operation":"exec","command":"echo","args":["fine","` + bad + `"]}`, `"args[1]"`},
		{"exec args surrogate", `machine|{"operation":"exec","command":"echo","args":["\ud800"]}`, `"args[0]"`},
		{"exec env value", `machine|{"operation":"exec","command":"echo","env":{"K":"` + bad + `"}}`, `"env.K"`},
		{"patch nested", `fs|{"operation":"patch","path":"` + root + `/a.txt","replacements":[{"old":"a","new":"` + bad + `"}]}`, `"replacements[0].new"`},
		{"batch nested", `machine|{"operation":"batch","commands":[{"command":"echo","args":["\udfff"]}]}`, `"commands[0].args[0]"`},
		{"key", `fs|{"operation":"write","path":"` + root + `/d.txt","data":"x","` + bad + `":1}`, `field "`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := toolError(t, in.URL, tc.args)
			msg, _ := hearthtest.Get(env, "error.message").(string)
			if env["state"] != "failed" || hearthtest.Get(env, "error.code") != "invalid_input" || !strings.Contains(msg, tc.field) || !strings.Contains(msg, "UTF-8") {
				t.Fatalf("want invalid_input naming %s, got %v", tc.field, env)
			}
		})
	}
	// Nothing was written under a replaced name.
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.ContainsRune(e.Name(), '\uFFFD') {
			t.Fatalf("a file was created under a changed name: %q", e.Name())
		}
	}
	// Valid surrogate pairs and non-ASCII text pass.
	env := toolError(t, in.URL, `fs|{"operation":"write","path":"`+root+`/é.txt","data":"\ud83d\ude00 ok"}`)
	if env["state"] != "completed" {
		t.Fatalf("a valid surrogate pair was refused: %v", env)
	}
	got, err := os.ReadFile(filepath.Join(root, "é.txt"))
	if err != nil || string(got) != "😀 ok" {
		t.Fatalf("content %q, %v", got, err)
	}
	// Outside the arguments: a JSON-RPC invalid-params error naming it.
	resp, b := rawPost(t, in.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"machine","arguments":{"operation":"host_info"},"_meta":{"hearth/conversation":"`+bad+`"}}}`, nil)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "-32602") || !strings.Contains(string(b), "params._meta.hearth/conversation") {
		t.Fatalf("bad UTF-8 in _meta: %d %s", resp.StatusCode, b)
	}
}

func TestHostileValuesNameTheField(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	cases := []struct {
		name, args string
		want       []string
	}{
		{"detach null", `machine|{"operation":"host_info","detach":null}`, []string{`"detach"`, "true or false"}},
		{"NUL in args", `machine|{"operation":"exec","command":"echo","args":["a\u0000b"]}`, []string{`"args[0]"`, "NUL"}},
		{"NUL in command", `machine|{"operation":"exec","command":"ec\u0000ho"}`, []string{`"command"`, "NUL"}},
		{"huge timeout", `machine|{"operation":"exec","command":"echo","timeout_ms":1e308}`, []string{`"timeout_ms"`, "from 1 to"}},
		{"timeout past Duration", `machine|{"operation":"exec","command":"echo","timeout_ms":9000000000000000}`, []string{`"timeout_ms"`}},
		{"timeout within int but past max", `machine|{"operation":"exec","command":"echo","timeout_ms":9007199254740}`, []string{`"timeout_ms"`, "max_exec_timeout_ms"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := toolError(t, in.URL, tc.args)
			msg, _ := hearthtest.Get(env, "error.message").(string)
			if env["state"] != "failed" || hearthtest.Get(env, "error.code") != "invalid_input" {
				t.Fatalf("want invalid_input, got %v", env)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Fatalf("message %q lacks %q", msg, w)
				}
			}
			for _, goMsg := range []string{"json:", "fork/exec", "invalid argument", "cannot unmarshal"} {
				if strings.Contains(msg, goMsg) {
					t.Fatalf("message %q carries a Go or OS message", msg)
				}
			}
		})
	}
}

// TestPendingNeverCarriesItsOwnResult races fast calls against a 1 ms
// inline budget and detached calls against their delivery: whatever the
// timing, a pending answer never lists its own future among its arrivals.
func TestPendingNeverCarriesItsOwnResult(t *testing.T) {
	in := hearthtest.Start(t, func(c *config.Config) {
		trusted(c)
		c.DispatchInlineBudgetMS = 1
	})
	c := hearthtest.Connect(t, in.URL, "own-result")
	for i := range 40 {
		args := map[string]any{"operation": "exec", "command": "true"}
		if i%2 == 1 {
			args = map[string]any{"operation": "host_info", "detach": true}
		}
		r := c.Call("machine", args)
		if r.State() != "pending" {
			continue
		}
		for _, a := range r.Arrivals() {
			if a["future_id"] == r.Get("future_id") {
				t.Fatalf("call %d: a pending answer carries its own result: %s", i, r.Raw)
			}
		}
	}
}
