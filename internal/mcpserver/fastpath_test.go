//go:build !windows

package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/mcpserver"
)

// fpCase is one request of the differential corpus.
type fpCase struct {
	name string
	body string
	// hdr overrides the default headers ("" deletes one); "Host" sets the
	// request's Host.
	hdr map[string]string
	// fast: the request must take the fast path (so the corpus keeps
	// covering it); otherwise either path may answer.
	fast bool
}

// modernMeta is what a 2026-07-28 client sends in every request's _meta.
const modernMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"diff","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}}`

// conformanceMeta is the _meta of the conformance suite's 2026-07-28
// requests.
const conformanceMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"conformance-test-client","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}`

func toolCall(id, name, args, meta string) string {
	b := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `"`
	if args != "" {
		b += `,"arguments":` + args
	}
	if meta != "" {
		b += `,"_meta":{` + meta + `}`
	}
	return b + `}}`
}

func modernHdr(name string) map[string]string {
	return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
}

// fpCorpus is the corpus: the requests of the official conformance suite's
// server scenarios that reach /mcp (initialize, ping, tools/list, calls of
// its fixture tools, the header-validation and DNS-rebinding probes),
// tools/call variants on each wire, every tool's operations with an
// unknown field, valid read calls, errors and bad inputs.
func fpCorpus(t *testing.T, in *hearthtest.Instance) []fpCase {
	file := filepath.Join(in.Root, "notes.txt")
	if err := os.WriteFile(file, []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(file, fixed, fixed); err != nil {
		t.Fatal(err)
	}
	p, _ := json.Marshal(file)
	path := string(p)
	// Text the answer's text content must escape (quotes, backslashes,
	// markup, controls, line separators, non-ASCII), and a file whose
	// answer is too large to copy into the text.
	odd := filepath.Join(in.Root, "odd.txt")
	if err := os.WriteFile(odd, []byte("\"q\" \\b <a href='x'>&amp;</a> \t\x01 \u2028\u2029 ü 日本 \U0001F600\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(in.Root, "big.txt")
	if err := os.WriteFile(big, []byte(strings.Repeat("forty bytes of text, then a newline...\n", 400)), 0o600); err != nil {
		t.Fatal(err)
	}
	oddPath, bigPath := jsonString(odd), jsonString(big)
	conv := `"hearth/conversation":"diff-conv"`
	stat := `{"operation":"stat","path":` + path + `}`
	cs := []fpCase{
		// Conformance: lifecycle and discovery.
		{name: "initialize", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"conformance","version":"1"}}}`, hdr: map[string]string{"MCP-Protocol-Version": ""}},
		{name: "initialized notification", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{name: "ping", body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
		{name: "tools/list", body: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`},
		{name: "tools/list modern", body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{` + modernMeta + `}}}`, hdr: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}},
		{name: "server/discover modern", body: `{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{` + modernMeta + `}}}`, hdr: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}},
		{name: "fixture tool", body: toolCall("5", "test_simple_text", `{}`, "")},
		{name: "fixture tool modern", body: toolCall("5", "test_simple_text", `{}`, modernMeta), hdr: modernHdr("test_simple_text")},
		{name: "prompts/list", body: `{"jsonrpc":"2.0","id":6,"method":"prompts/list"}`},
		{name: "resources/list", body: `{"jsonrpc":"2.0","id":6,"method":"resources/list"}`},
		{name: "logging/setLevel", body: `{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{"level":"info"}}`},
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":7,"method":"no/such","params":{}}`},
		{name: "unknown method modern", body: `{"jsonrpc":"2.0","id":7,"method":"no/such","params":{"_meta":{` + modernMeta + `}}}`, hdr: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "no/such"}},
		// Conformance: DNS rebinding and header validation.
		{name: "foreign Host", body: toolCall("8", "fs", stat, ""), hdr: map[string]string{"Host": "evil.example:80"}},
		{name: "foreign Origin", body: toolCall("8", "fs", stat, ""), hdr: map[string]string{"Origin": "http://evil.example"}},
		{name: "loopback Origin", body: toolCall("8", "fs", stat, ""), hdr: map[string]string{"Origin": "http://127.0.0.1:1234"}, fast: true},
		{name: "upper-case localhost Host", body: toolCall("8", "fs", stat, ""), hdr: map[string]string{"Host": "LOCALHOST"}},
		{name: "localhost Host", body: toolCall("8", "fs", stat, ""), hdr: map[string]string{"Host": "localhost"}, fast: true},
		{name: "modern missing Mcp-Method", body: toolCall("9", "fs", stat, modernMeta), hdr: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Name": "fs"}},
		{name: "modern missing Mcp-Name", body: toolCall("9", "fs", stat, modernMeta), hdr: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}},
		{name: "modern Mcp-Method mismatch", body: toolCall("9", "fs", stat, modernMeta), hdr: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list", "Mcp-Name": "fs"}},
		{name: "modern Mcp-Name mismatch", body: toolCall("9", "fs", stat, modernMeta), hdr: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "machine"}},
		{name: "modern Mcp-Param header", body: toolCall("9", "fs", stat, modernMeta), hdr: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "fs", "Mcp-Param-Path": "x"}},
		{name: "modern without _meta", body: toolCall("9", "fs", stat, ""), hdr: modernHdr("fs")},
		{name: "modern _meta version mismatch", body: toolCall("9", "fs", stat, strings.Replace(modernMeta, `"2026-07-28"`, `"2025-11-25"`, 1)), hdr: modernHdr("fs")},
		{name: "modern _meta version not a string", body: toolCall("9", "fs", stat, strings.Replace(modernMeta, `"2026-07-28"`, `20260728`, 1)), hdr: modernHdr("fs")},
		{name: "modern _meta without capabilities", body: toolCall("9", "fs", stat, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`), hdr: modernHdr("fs")},
		{name: "modern _meta capabilities not an object", body: toolCall("9", "fs", stat, `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":7`), hdr: modernHdr("fs")},
		{name: "modern _meta roots wrong type", body: toolCall("9", "fs", stat, `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":"yes"}}`), hdr: modernHdr("fs")},
		{name: "modern _meta bad clientInfo", body: toolCall("9", "fs", stat, `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":5`), hdr: modernHdr("fs")},
		{name: "modern _meta null clientInfo", body: toolCall("9", "fs", stat, `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":null`), hdr: modernHdr("fs")},
		{name: "modern _meta logLevel", body: toolCall("9", "fs", stat, modernMeta+`,"io.modelcontextprotocol/logLevel":"debug"`), hdr: modernHdr("fs")},
		{name: "modern _meta capabilities only", body: toolCall("10", "fs", stat, `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`), hdr: modernHdr("fs"), fast: true},
		{name: "modern _meta capabilities of every plain kind", body: toolCall("10", "fs", stat, `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{},"sampling":{},"elicitation":{},"experimental":{"x":{"y":1}},"extensions":{"a/b":{}}}`), hdr: modernHdr("fs"), fast: true},
		{name: "modern _meta capabilities sampling with fields", body: toolCall("10", "fs", stat, `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{"tools":{}}}`), hdr: modernHdr("fs")},
		{name: "old wire with modern _meta", body: toolCall("11", "fs", stat, modernMeta), hdr: map[string]string{"MCP-Protocol-Version": "2025-11-25"}},
		{name: "old wire with modern _meta version only", body: toolCall("11", "fs", stat, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`)},
		{name: "no protocol header", body: toolCall("12", "fs", stat, ""), hdr: map[string]string{"MCP-Protocol-Version": ""}},
		{name: "protocol 2025-03-26", body: toolCall("12", "fs", stat, ""), hdr: map[string]string{"MCP-Protocol-Version": "2025-03-26"}},
		{name: "protocol 2024-11-05", body: toolCall("12", "fs", stat, ""), hdr: map[string]string{"MCP-Protocol-Version": "2024-11-05"}},
		{name: "protocol unsupported", body: toolCall("12", "fs", stat, ""), hdr: map[string]string{"MCP-Protocol-Version": "1999-01-01"}},
		{name: "protocol future", body: toolCall("12", "fs", stat, ""), hdr: map[string]string{"MCP-Protocol-Version": "2099-01-01"}},
		{name: "protocol 2025-11-25", body: toolCall("13", "fs", stat, ""), hdr: map[string]string{"MCP-Protocol-Version": "2025-11-25"}, fast: true},
		{name: "Content-Type text/plain", body: toolCall("14", "fs", stat, ""), hdr: map[string]string{"Content-Type": "text/plain"}},
		{name: "Content-Type missing", body: toolCall("14", "fs", stat, ""), hdr: map[string]string{"Content-Type": ""}},
		{name: "Content-Type with charset", body: toolCall("14", "fs", stat, ""), hdr: map[string]string{"Content-Type": "application/json; charset=utf-8"}, fast: true},
		{name: "Accept json only", body: toolCall("15", "fs", stat, ""), hdr: map[string]string{"Accept": "application/json"}, fast: true},
		{name: "Accept missing", body: toolCall("15", "fs", stat, ""), hdr: map[string]string{"Accept": ""}},
		{name: "Accept event-stream only", body: toolCall("15", "fs", stat, ""), hdr: map[string]string{"Accept": "text/event-stream"}},
		{name: "Accept wildcard", body: toolCall("15", "fs", stat, ""), hdr: map[string]string{"Accept": "*/*"}, fast: true},
		{name: "Accept type wildcards", body: toolCall("15", "fs", stat, ""), hdr: map[string]string{"Accept": "application/*, text/*"}},
		{name: "Last-Event-ID", body: toolCall("16", "fs", stat, ""), hdr: map[string]string{"Last-Event-ID": "x_1"}},
		{name: "Mcp-Session-Id", body: toolCall("16", "fs", stat, ""), hdr: map[string]string{"Mcp-Session-Id": "abc"}},
		// Conformance: the _meta its 2026-07-28 scenarios send, and its
		// header-validation calls of the first listed tool.
		{name: "conformance modern call", body: toolCall("0", "machine", `{}`, conformanceMeta), hdr: modernHdr("machine"), fast: true},
		{name: "conformance Mcp-Name with spaces", body: toolCall("0", "machine", `{}`, conformanceMeta), hdr: modernHdr("  machine  "), fast: true},
		{name: "conformance Mcp-Name wrong", body: toolCall("0", "machine", `{}`, conformanceMeta), hdr: modernHdr("wrong_tool_name")},
		{name: "conformance host_info", body: toolCall("1", "machine", `{"operation":"host_info"}`, conformanceMeta), hdr: modernHdr("machine"), fast: true},
		// tools/call shapes.
		{name: "fs.stat", body: toolCall("20", "fs", stat, ""), fast: true},
		{name: "fs.stat string id", body: toolCall(`"req-1"`, "fs", stat, ""), fast: true},
		{name: "fs.stat negative id", body: toolCall("-3", "fs", stat, ""), fast: true},
		{name: "fs.stat zero id", body: toolCall("0", "fs", stat, ""), fast: true},
		{name: "fs.stat id -0", body: toolCall("-0", "fs", stat, "")},
		{name: "fs.stat id 1.5", body: toolCall("1.5", "fs", stat, "")},
		{name: "fs.stat id 1e3", body: toolCall("1e3", "fs", stat, "")},
		{name: "fs.stat id 2^60", body: toolCall("1152921504606846976", "fs", stat, "")},
		{name: "fs.stat escaped id", body: toolCall(`"a\u0062c"`, "fs", stat, "")},
		{name: "fs.stat null id", body: toolCall("null", "fs", stat, "")},
		{name: "fs.stat object id", body: toolCall(`{"a":1}`, "fs", stat, "")},
		{name: "fs.stat notification", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"fs","arguments":` + stat + `}}`},
		{name: "fs.stat batch", body: `[` + toolCall("21", "fs", stat, "") + `]`},
		{name: "fs.stat batch on 2025-03-26", body: `[` + toolCall("21", "fs", stat, "") + `]`, hdr: map[string]string{"MCP-Protocol-Version": "2025-03-26"}},
		{name: "jsonrpc 1.0", body: strings.Replace(toolCall("22", "fs", stat, ""), `"2.0"`, `"1.0"`, 1)},
		{name: "no jsonrpc", body: `{"id":22,"method":"tools/call","params":{"name":"fs","arguments":` + stat + `}}`},
		{name: "extra top-level field", body: strings.Replace(toolCall("22", "fs", stat, ""), `"id":22`, `"id":22,"extra":1`, 1)},
		{name: "duplicate method", body: strings.Replace(toolCall("22", "fs", stat, ""), `"method":"tools/call"`, `"method":"tools/list","method":"tools/call"`, 1)},
		{name: "duplicate name", body: strings.Replace(toolCall("22", "fs", stat, ""), `"name":"fs"`, `"name":"machine","name":"fs"`, 1)},
		{name: "escaped tool name", body: toolCall("22", `f\u0073`, stat, "")},
		{name: "unknown tool", body: toolCall("23", "nosuch", `{}`, "")},
		{name: "empty tool name", body: toolCall("23", "", `{}`, "")},
		{name: "tool name not a string", body: `{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":5,"arguments":{}}}`},
		{name: "no params", body: `{"jsonrpc":"2.0","id":24,"method":"tools/call"}`},
		{name: "params an array", body: `{"jsonrpc":"2.0","id":24,"method":"tools/call","params":["fs"]}`},
		{name: "params null", body: `{"jsonrpc":"2.0","id":24,"method":"tools/call","params":null}`},
		{name: "no arguments", body: toolCall("25", "fs", "", ""), fast: true},
		{name: "arguments null", body: toolCall("25", "fs", "null", "")},
		{name: "arguments a string", body: toolCall("25", "fs", `"stat"`, "")},
		{name: "arguments an array", body: toolCall("25", "fs", `[1]`, "")},
		{name: "arguments empty", body: toolCall("25", "fs", `{}`, ""), fast: true},
		{name: "extra params field", body: strings.Replace(toolCall("25", "fs", stat, ""), `"name":"fs"`, `"name":"fs","task":{}`, 1)},
		{name: "inputResponses", body: strings.Replace(toolCall("25", "fs", stat, ""), `"name":"fs"`, `"name":"fs","inputResponses":{}`, 1)},
		{name: "requestState", body: strings.Replace(toolCall("25", "fs", stat, ""), `"name":"fs"`, `"name":"fs","requestState":"x"`, 1)},
		{name: "_meta not an object", body: `{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"fs","arguments":` + stat + `,"_meta":5}}`},
		{name: "_meta null", body: `{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"name":"fs","arguments":` + stat + `,"_meta":null}}`},
		{name: "_meta empty", body: toolCall("26", "fs", stat, " "), fast: true},
		{name: "_meta progressToken", body: toolCall("26", "fs", stat, `"progressToken":"p1"`)},
		{name: "_meta duplicate key", body: toolCall("26", "fs", stat, conv+`,"hearth/conversation":"other"`)},
		{name: "_meta conversation", body: toolCall("27", "fs", stat, conv), fast: true},
		{name: "_meta conversation modern", body: toolCall("27", "fs", stat, conv+","+modernMeta), hdr: modernHdr("fs"), fast: true},
		{name: "_meta conversation not a string", body: toolCall("27", "fs", stat, `"hearth/conversation":{"n":1}`), fast: true},
		{name: "_meta openai/session", body: toolCall("28", "fs", stat, `"openai/session":"s-1"`), fast: true},
		{name: "_meta command id without conversation", body: toolCall("29", "fs", stat, `"hearth/command_id":"c1"`), fast: true},
		{name: "_meta command id in conversation", body: toolCall("29", "fs", stat, conv+`,"hearth/command_id":"c1"`), fast: true},
		{name: "whitespace around", body: "\n  " + toolCall("30", "fs", stat, "") + "\n", fast: true},
		{name: "not JSON", body: `{"jsonrpc":`},
		{name: "empty body", body: ``},
		{name: "nested too deep", body: toolCall("31", "machine", `{"operation":"host_info","x":`+strings.Repeat("[", 200)+strings.Repeat("]", 200)+`}`, "")},
		{name: "invalid UTF-8 in arguments", body: toolCall("32", "fs", `{"operation":"stat","path":"a`+"\xff"+`"}`, ""), fast: true},
		{name: "lone surrogate in arguments", body: toolCall("32", "fs", `{"operation":"stat","path":"a\ud800"}`, ""), fast: true},
		{name: "invalid UTF-8 in _meta", body: toolCall("32", "fs", stat, `"hearth/conversation":"`+"\xff"+`"`)},
		{name: "unknown operation", body: toolCall("33", "fs", `{"operation":"nosuch"}`, ""), fast: true},
		{name: "no operation", body: toolCall("33", "fs", `{"path":`+path+`}`, ""), fast: true},
		{name: "fs.stat missing file", body: toolCall("34", "fs", `{"operation":"stat","path":`+jsonString(filepath.Join(in.Root, "absent"))+`}`, ""), fast: true},
		{name: "fs.stat outside the roots", body: toolCall("34", "fs", `{"operation":"stat","path":"/etc/passwd"}`, ""), fast: true},
		{name: "fs.stat wrong field type", body: toolCall("34", "fs", `{"operation":"stat","path":5}`, ""), fast: true},
		{name: "fs.read", body: toolCall("35", "fs", `{"operation":"read","path":`+path+`}`, ""), fast: true},
		{name: "fs.read text to escape", body: toolCall("35", "fs", `{"operation":"read","path":`+oddPath+`}`, ""), fast: true},
		{name: "fs.read text to escape modern", body: toolCall("35", "fs", `{"operation":"read","path":`+oddPath+`}`, modernMeta), hdr: modernHdr("fs"), fast: true},
		{name: "fs.read larger than the text copy", body: toolCall("35", "fs", `{"operation":"read","path":`+bigPath+`}`, ""), fast: true},
		{name: "fs.read larger than the text copy modern", body: toolCall("35", "fs", `{"operation":"read","path":`+bigPath+`}`, modernMeta), hdr: modernHdr("fs"), fast: true},
		{name: "fs.list", body: toolCall("36", "fs", `{"operation":"list","path":`+jsonString(in.Root)+`}`, ""), fast: true},
		{name: "fs.search", body: toolCall("37", "fs", `{"operation":"search","path":`+jsonString(in.Root)+`,"query":"two"}`, ""), fast: true},
		{name: "artifact read unknown", body: toolCall("38", "artifact", `{"operation":"read","artifact_id":"art_nosuch"}`, ""), fast: true},
		{name: "task wait unknown future", body: toolCall("39", "task", `{"operation":"wait","future_id":"fut_nosuch","timeout_ms":1}`, ""), fast: true},
		// What the body's one walk records (the request's, params' and
		// _meta's members) at each level: escaped, repeated and
		// case-folded keys, nesting at the bound, bad strings in keys,
		// whitespace, shapes that are not objects, look-alikes deeper.
		{name: "escaped top-level key", body: strings.Replace(toolCall("41", "fs", stat, ""), `"method"`, `"m\u0065thod"`, 1)},
		{name: "escaped params key", body: strings.Replace(toolCall("41", "fs", stat, ""), `"arguments"`, `"argum\u0065nts"`, 1)},
		{name: "escaped _meta key", body: toolCall("41", "fs", stat, `"hearth/c\u006fnversation":"diff-conv"`)},
		{name: "escaped _meta key of the SDK's", body: toolCall("41", "fs", stat, `"io.modelcontextprotocol\/progressToken":"p"`)},
		{name: "repeated top-level key", body: strings.Replace(toolCall("42", "fs", stat, ""), `"id":42`, `"id":42,"id":43`, 1)},
		{name: "repeated params key", body: strings.Replace(toolCall("42", "fs", stat, ""), `"name":"fs"`, `"name":"fs","arguments":{},"arguments":`+stat, 1)},
		{name: "repeated params", body: `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"machine"},"params":{"name":"fs","arguments":` + stat + `}}`},
		{name: "repeated _meta", body: strings.Replace(toolCall("42", "fs", stat, conv), `"name":"fs"`, `"name":"fs","_meta":{"progressToken":"p"}`, 1)},
		{name: "case-folded top-level key", body: strings.Replace(toolCall("43", "fs", stat, ""), `"method"`, `"METHOD"`, 1)},
		{name: "case-folded and exact top-level keys", body: strings.Replace(toolCall("43", "fs", stat, ""), `"id":43`, `"id":43,"Id":44`, 1)},
		{name: "case-folded jsonrpc", body: strings.Replace(toolCall("43", "fs", stat, ""), `"jsonrpc"`, `"JSONRPC"`, 1)},
		{name: "case-folded params key", body: strings.Replace(toolCall("43", "fs", stat, ""), `"name"`, `"Name"`, 1)},
		{name: "case-folded _meta", body: strings.Replace(toolCall("43", "fs", stat, conv), `"_meta"`, `"_META"`, 1)},
		{name: "case-folded _meta key", body: toolCall("43", "fs", stat, `"Hearth/Conversation":"diff-conv"`), fast: true},
		{name: "nested to the depth bound", body: toolCall("44", "machine", `{"operation":"host_info","x":`+strings.Repeat("[", mcpserver.MaxJSONDepth-3)+strings.Repeat("]", mcpserver.MaxJSONDepth-3)+`}`, ""), fast: true},
		{name: "nested one past the depth bound", body: toolCall("44", "machine", `{"operation":"host_info","x":`+strings.Repeat("[", mcpserver.MaxJSONDepth-2)+strings.Repeat("]", mcpserver.MaxJSONDepth-2)+`}`, "")},
		{name: "_meta nested to the depth bound", body: toolCall("44", "fs", stat, `"x":`+strings.Repeat("[", mcpserver.MaxJSONDepth-3)+strings.Repeat("]", mcpserver.MaxJSONDepth-3)), fast: true},
		{name: "invalid UTF-8 in an arguments key", body: toolCall("45", "fs", `{"operation":"stat","pa`+"\xff"+`th":`+path+`}`, ""), fast: true},
		{name: "invalid UTF-8 in a params key", body: strings.Replace(toolCall("45", "fs", stat, ""), `"name":"fs"`, `"name":"fs","x`+"\xff"+`":1`, 1)},
		{name: "invalid UTF-8 in a top-level key", body: strings.Replace(toolCall("45", "fs", stat, ""), `"id":45`, `"id":45,"x`+"\xff"+`":1`, 1)},
		{name: "invalid UTF-8 in a _meta key", body: toolCall("45", "fs", stat, `"x`+"\xff"+`":1`)},
		{name: "invalid UTF-8 in arguments, then _meta", body: toolCall("45", "fs", `{"operation":"stat","path":"a`+"\xff"+`"}`, conv), fast: true},
		{name: "whitespace everywhere", body: " {\n \"jsonrpc\" :\t\"2.0\" ,\r\n \"id\" : 46 , \"method\" : \"tools/call\" , \"params\" : {\n  \"name\" : \"fs\" ,\n  \"arguments\" : { \"operation\" : \"stat\" , \"path\" : " + path + " } ,\n  \"_meta\" : { \"hearth/conversation\" : \"diff-conv\" , \"hearth/command_id\" : \"w1\" }\n }\n}\n ", fast: true},
		{name: "_meta an array", body: `{"jsonrpc":"2.0","id":47,"method":"tools/call","params":{"name":"fs","arguments":` + stat + `,"_meta":[{"progressToken":1}]}}`},
		{name: "_meta a string", body: `{"jsonrpc":"2.0","id":47,"method":"tools/call","params":{"name":"fs","arguments":` + stat + `,"_meta":"x"}}`},
		{name: "params a string", body: `{"jsonrpc":"2.0","id":47,"method":"tools/call","params":"fs"}`},
		{name: "params a number", body: `{"jsonrpc":"2.0","id":47,"method":"tools/call","params":5}`},
		{name: "params and _meta inside the arguments", body: toolCall("48", "fs", `{"operation":"stat","path":`+path+`,"params":{"_meta":{"progressToken":"p"}}}`, ""), fast: true},
		{name: "_meta of many members", body: toolCall("48", "fs", stat, manyMetaKeys(20))},
		{name: "_meta of members at the bound", body: toolCall("48", "fs", stat, manyMetaKeys(16)), fast: true},
	}
	// Every operation of every tool, with a field it does not take.
	for _, ti := range mcpserver.Tools() {
		for _, op := range in.App.Registry.Operations(ti.Name) {
			args := `{"operation":"` + op.Operation + `","no_such_field_x":1}`
			cs = append(cs,
				fpCase{name: ti.Name + "." + op.Operation + " unknown field", body: toolCall("40", ti.Name, args, ""), fast: true},
				fpCase{name: ti.Name + "." + op.Operation + " unknown field modern", body: toolCall(`"m40"`, ti.Name, args, modernMeta), hdr: modernHdr(ti.Name), fast: true},
			)
		}
	}
	return cs
}

// manyMetaKeys is n _meta members "k0":0,"k1":1,...
func manyMetaKeys(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return strings.Join(parts, ",")
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// fpAnswer is what a path answered.
type fpAnswer struct {
	Status      int
	ContentType string
	CacheCtl    string
	Body        any
}

func fpSend(t *testing.T, url string, c fpCase) fpAnswer {
	t.Helper()
	req, err := http.NewRequest("POST", url+"/mcp", strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	for k, v := range c.hdr {
		switch {
		case k == "Host":
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := fpAnswer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), CacheCtl: resp.Header.Get("Cache-Control")}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a.Body); err != nil {
			a.Body = "not JSON: " + string(raw)
		}
	}
	a.Body = normalize(a.Body)
	return a
}

// volatile are the parts of an answer that differ from one call to the
// next whichever path serves it: ids minted per call and clock readings.
var volatile = regexp.MustCompile(`\b(fut|req|art|cmd|run|job|rcpt|evt)_[0-9A-Za-z]{6,}\b|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)|"(elapsed_ms|duration_ms|took_ms|uptime_s|uptime_ms)":\d+`)

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch k {
			case "elapsed_ms", "duration_ms", "took_ms", "uptime_s", "uptime_ms":
				x[k] = "<n>"
				continue
			}
			x[k] = normalize(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
		return x
	case string:
		return volatile.ReplaceAllString(x, "<v>")
	}
	return v
}

// TestFastPathMatchesSDK sends every request of the corpus through one
// Hearth's surface with the fast path and without it (every request to
// the go-sdk), and requires the same answers: status, content type and
// the decoded JSON. Each request goes first to one path and then, as a
// retry with the same id, to the other; half the corpus starts with the
// SDK. The requests that must take the fast path are checked to take it
// (the SDK-only surface counts none).
func TestFastPathMatchesSDK(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	fast := httptest.NewServer(in.App.MCP.Handler())
	defer fast.Close()
	sdk := httptest.NewServer(mcpserver.SDKOnlyHandler(in.App.MCP))
	defer sdk.Close()
	corpus := fpCorpus(t, in)
	var fastCount int
	for i, c := range corpus {
		before := mcpserver.FastCalls(in.App.MCP)
		var f, s fpAnswer
		if i%2 == 0 {
			f, s = fpSend(t, fast.URL, c), fpSend(t, sdk.URL, c)
		} else {
			s, f = fpSend(t, sdk.URL, c), fpSend(t, fast.URL, c)
		}
		took := mcpserver.FastCalls(in.App.MCP) - before
		if c.fast && took != 1 {
			t.Errorf("%s: took the fast path %d times, want once", c.name, took)
		}
		fastCount += int(took)
		if !reflect.DeepEqual(f, s) {
			fj, _ := json.MarshalIndent(f, "", " ")
			sj, _ := json.MarshalIndent(s, "", " ")
			t.Errorf("%s: fast path answered\n%s\nthe SDK answered\n%s", c.name, fj, sj)
		}
	}
	t.Logf("%d requests, %d took the fast path", len(corpus), fastCount)
}

// TestFastPathKeepsTheFingerprint: a retry of the same request id is the
// same request whichever path serves it, and a conversation's arrival is
// re-offered to the retry and acknowledged by the next request, on both.
func TestFastPathRetryReoffersArrivals(t *testing.T) {
	for _, fastFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast_first=%v", fastFirst), func(t *testing.T) {
			in := hearthtest.Start(t, trusted)
			fast := httptest.NewServer(in.App.MCP.Handler())
			defer fast.Close()
			sdk := httptest.NewServer(mcpserver.SDKOnlyHandler(in.App.MCP))
			defer sdk.Close()
			first, second := fast.URL, sdk.URL
			if !fastFirst {
				first, second = second, first
			}
			conv := `"hearth/conversation":"retry-conv"`
			// A detached call: its result arrives on a later call.
			sub := fpSend(t, first, fpCase{name: "detach", body: toolCall("1", "machine", `{"operation":"host_info","detach":true}`, conv)})
			if sub.Status != 200 {
				t.Fatalf("detached call: %+v", sub)
			}
			probe := toolCall("2", "machine", `{"operation":"host_info"}`, conv)
			var a1 fpAnswer
			deadline := time.Now().Add(30 * time.Second)
			for {
				a1 = fpSend(t, first, fpCase{name: "probe", body: probe})
				if len(arrivalsOf(t, a1)) > 0 || time.Now().After(deadline) {
					break
				}
				probe = strings.Replace(probe, `"id":2`, `"id":3`, 1)
				time.Sleep(50 * time.Millisecond)
			}
			got := arrivalsOf(t, a1)
			if len(got) != 1 {
				t.Fatalf("want the detached call's arrival, got %v", a1.Body)
			}
			// The same request again (a retry) through the other path: the
			// arrival is offered again.
			a2 := fpSend(t, second, fpCase{name: "retry", body: probe})
			if again := arrivalsOf(t, a2); len(again) != 1 || !reflect.DeepEqual(again, got) {
				t.Fatalf("retry through the other path: arrivals %v, want %v", again, got)
			}
			// A new request acknowledges it: no more arrivals.
			a3 := fpSend(t, second, fpCase{name: "next", body: toolCall("99", "machine", `{"operation":"host_info"}`, conv)})
			if n := arrivalsOf(t, a3); len(n) != 0 {
				t.Fatalf("after a new request, arrivals %v, want none", n)
			}
		})
	}
}

func arrivalsOf(t *testing.T, a fpAnswer) []any {
	t.Helper()
	m, _ := a.Body.(map[string]any)
	res, _ := m["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if sc == nil {
		t.Fatalf("no structuredContent in %v", a.Body)
	}
	arr, _ := sc["arrivals"].([]any)
	return arr
}

// TestFastPathServesGoSDKClient: a real go-sdk client's calls (the
// 2026-07-28 wire, its per-request _meta and headers) take the fast path,
// and their results are the ones the SDK-only surface gives the same
// client.
func TestFastPathServesGoSDKClient(t *testing.T) {
	in := hearthtest.Start(t, trusted)
	file := filepath.Join(in.Root, "notes.txt")
	if err := os.WriteFile(file, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fast := httptest.NewServer(in.App.MCP.Handler())
	defer fast.Close()
	sdk := httptest.NewServer(mcpserver.SDKOnlyHandler(in.App.MCP))
	defer sdk.Close()
	ctx := context.Background()
	calls := []*mcp.CallToolParams{
		{Name: "fs", Arguments: map[string]any{"operation": "stat", "path": file}, Meta: mcp.Meta{"hearth/conversation": "sdk-client"}},
		{Name: "fs", Arguments: map[string]any{"operation": "stat", "path": file, "bogus": 1}},
		{Name: "fs", Arguments: map[string]any{"operation": "read", "path": file}},
	}
	var answers [2][]string
	for i, url := range []string{fast.URL, sdk.URL} {
		c := mcp.NewClient(&mcp.Implementation{Name: "diff", Version: "1"}, nil)
		s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		before := mcpserver.FastCalls(in.App.MCP)
		for _, p := range calls {
			res, err := s.CallTool(ctx, p)
			if err != nil {
				t.Fatalf("call %v: %v", p.Arguments, err)
			}
			b, _ := json.Marshal(normalize(mustDecode(t, res)))
			answers[i] = append(answers[i], string(b))
		}
		took := mcpserver.FastCalls(in.App.MCP) - before
		if want := int64(len(calls)); i == 0 && took != want {
			t.Errorf("the go-sdk client's calls took the fast path %d times, want %d", took, want)
		}
		if i == 1 && took != 0 {
			t.Errorf("the SDK-only surface took the fast path %d times", took)
		}
		s.Close()
	}
	for i := range calls {
		if answers[0][i] != answers[1][i] {
			t.Errorf("call %d: fast path\n%s\nSDK\n%s", i, answers[0][i], answers[1][i])
		}
	}
}

func mustDecode(t *testing.T, res *mcp.CallToolResult) any {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
