package soak

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// badInput is one hostile request of the corpus.
type badInput struct {
	name string
	body string
	hdr  map[string]string
	// tool: the answer is a tool result refused as invalid_input (else a
	// JSON-RPC error object).
	tool bool
}

func toolCall(args string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + args[:strings.Index(args, "|")] +
		`","arguments":` + args[strings.Index(args, "|")+1:] + `,"_meta":{"hearth/conversation":"soak-corpus"}}}`
}

// corpus is the bad-input corpus: malformed JSON-RPC, hostile headers,
// invalid UTF-8, nulls, NULs and out-of-range numbers.
func corpus(root string) []badInput {
	nest := func(n int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"machine","arguments":{"operation":"host_info","x":` +
			strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`
	}
	bad := "\xff\xfe\xc3("
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	in := []badInput{
		{name: "empty body", body: ``},
		{name: "truncated", body: `{"jsonrpc":"2.0","id":1,"method":`},
		{name: "not json", body: `hello`},
		{name: "bare null", body: `null`},
		{name: "bare number", body: `42`},
		{name: "bare string", body: `"tools/call"`},
		{name: "bare true", body: `true`},
		{name: "batch", body: `[` + init + `,` + init + `]`},
		{name: "empty batch", body: `[]`},
		{name: "no method", body: `{"jsonrpc":"2.0","id":1}`},
		{name: "method number", body: `{"jsonrpc":"2.0","id":1,"method":5}`},
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":1,"method":"no/such","params":{}}`},
		{name: "tools/call no params", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`},
		{name: "unknown tool", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`},
		{name: "foreign host", body: init, hdr: map[string]string{"Host": "evil.example.com"}},
		{name: "foreign origin", body: init, hdr: map[string]string{"Origin": "http://evil.example.com"}},
		{name: "text/plain", body: init, hdr: map[string]string{"Content-Type": "text/plain"}},
		{name: "bad protocol header", body: init, hdr: map[string]string{"MCP-Protocol-Version": "1999-01-01"}},
		{name: "oversized", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"machine","arguments":{"operation":"exec","command":"` + strings.Repeat("a", 5<<20) + `"}}}`},
		{name: "bad utf-8 in _meta", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"machine","arguments":{"operation":"host_info"},"_meta":{"hearth/conversation":"` + bad + `"}}}`},
		{name: "bad utf-8 tool name", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + bad + `","arguments":{}}}`},
	}
	for _, d := range []int{64, 129, 1000, 5000, 9990, 20000} {
		in = append(in, badInput{name: fmt.Sprintf("nested %d", d), body: nest(d)})
	}
	for name, args := range map[string]string{
		"path bad utf-8":       `fs|{"operation":"write","path":"` + root + `/` + bad + `.txt","data":"x"}`,
		"data bad utf-8":       `fs|{"operation":"write","path":"` + root + `/corpus.txt","data":"` + bad + `"}`,
		"data lone surrogate":  `fs|{"operation":"write","path":"` + root + `/corpus.txt","data":"\ud800"}`,
		"args bad utf-8":       `machine|{"operation":"exec","command":"echo","args":["` + bad + `"]}`,
		"args lone low":        `machine|{"operation":"exec","command":"echo","args":["\udc00x"]}`,
		"env bad utf-8":        `machine|{"operation":"exec","command":"echo","env":{"K":"` + bad + `"}}`,
		"detach null":          `machine|{"operation":"host_info","detach":null}`,
		"NUL in args":          `machine|{"operation":"exec","command":"echo","args":["a\u0000b"]}`,
		"NUL in command":       `machine|{"operation":"exec","command":"e\u0000"}`,
		"timeout 1e308":        `machine|{"operation":"exec","command":"echo","timeout_ms":1e308}`,
		"timeout -1":           `machine|{"operation":"exec","command":"echo","timeout_ms":-1}`,
		"timeout 2^60":         `machine|{"operation":"exec","command":"echo","timeout_ms":1152921504606846976}`,
		"no operation":         `machine|{}`,
		"unknown operation":    `machine|{"operation":"explode"}`,
		"unknown field":        `machine|{"operation":"host_info","x":1}`,
		"operation null":       `machine|{"operation":null}`,
		"arguments array":      `machine|[]`,
		"command null":         `machine|{"operation":"exec","command":null}`,
		"args not array":       `machine|{"operation":"exec","command":"echo","args":"x"}`,
		"relative path":        `fs|{"operation":"read","path":"relative.txt"}`,
		"outside roots":        `fs|{"operation":"read","path":"/etc/passwd"}`,
		"bad base64":           `fs|{"operation":"write","path":"` + root + `/b.bin","data":"***","encoding":"base64"}`,
		"receipt unknown":      `fs|{"operation":"undo","receipt_id":"rcpt_nope"}`,
		"task get unknown":     `task|{"operation":"get","id":"job_nope"}`,
		"job delay too long":   `task|{"operation":"submit","job":{"command":"echo","delay_ms":1e15}}`,
		"batch over 16":        `machine|{"operation":"batch","commands":[` + strings.TrimSuffix(strings.Repeat(`{"command":"echo"},`, 17), ",") + `]}`,
		"patch no replacement": `fs|{"operation":"patch","path":"` + root + `/corpus.txt","replacements":[]}`,
	} {
		in = append(in, badInput{name: name, body: toolCall(args), tool: true})
	}
	return in
}

// corpusResult is what one hostile request got.
type corpusResult struct {
	name, problem string
}

// sendCorpus posts each hostile request and checks the answer: never a
// 5xx, never plain text, always a JSON-RPC error object or a tool result
// that failed (isError) without a Go or OS message.
func sendCorpus(hc *http.Client, url, root string) (sent int, problems []corpusResult) {
	for _, b := range corpus(root) {
		sent++
		if p := sendOne(hc, url, b); p != "" {
			problems = append(problems, corpusResult{b.name, p})
		}
	}
	return sent, problems
}

func sendOne(hc *http.Client, url string, b badInput) string {
	req, err := http.NewRequest("POST", url, strings.NewReader(b.body))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	for k, v := range b.hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "transport: " + err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 500 {
		return fmt.Sprintf("status %d: %.200s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Sprintf("status %d, Content-Type %q: %.200s", resp.StatusCode, ct, body)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || m["jsonrpc"] != "2.0" {
		return fmt.Sprintf("not a JSON-RPC message: %.200s", body)
	}
	text := string(body)
	for _, goMsg := range []string{"json: ", "fork/exec", "invalid argument", "cannot unmarshal", "goroutine"} {
		if strings.Contains(text, goMsg) {
			return fmt.Sprintf("a Go or OS message (%q): %.300s", goMsg, body)
		}
	}
	if m["error"] != nil {
		return ""
	}
	if isErr, _ := get(m, "result", "isError").(bool); !isErr {
		return fmt.Sprintf("accepted: %.300s", body)
	}
	return ""
}
