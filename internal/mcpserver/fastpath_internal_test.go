package mcpserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// TestObjectFieldsAgreesWithDecoder: where objectFields splits an object,
// encoding/json reads the same members; the repeated keys, escaped keys
// and non-objects it refuses are listed.
func TestObjectFieldsAgreesWithDecoder(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{`{}`, true},
		{` { } `, true},
		{`{"a":1}`, true},
		{`{"a":"x}\"]","b":[1,{"c":"]"}],"d":{"e":[]},"f":null,"g":-1.5e3,"h":true}`, true},
		{"{\n\t\"a\" :\r 1 ,\"b\":\"\\\\\"}\n", true},
		{`{"a":1,"a":2}`, false},
		{`{"a\u0062":1}`, false},
		{`{"a\"":1}`, false},
		{`[1]`, false},
		{`"x"`, false},
		{`null`, false},
		{`5`, false},
		{`{"a":1} {}`, false},
		{`{` + manyMembers(maxMembers) + `}`, true},
		{`{` + manyMembers(maxMembers+1) + `}`, false},
	}
	for _, c := range cases {
		split, ok := objectFields(json.RawMessage(c.in), nil)
		if ok != c.ok {
			t.Errorf("%s: ok %v, want %v", c.in, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		got := map[string]json.RawMessage{}
		for _, m := range split {
			got[string(m.key)] = m.val
		}
		if len(got) != len(split) {
			t.Errorf("%s: a key split twice: %q", c.in, split)
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.in), &want); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if len(want) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: split %q, decoder %q", c.in, got, want)
		}
	}
}

// TestPlainID: the ids the fast path copies into its answer verbatim.
func TestPlainID(t *testing.T) {
	for id, want := range map[string]bool{
		`1`: true, `0`: true, `-7`: true, `"a"`: true, `""`: true, `123456789012345`: true,
		`-0`: false, `01`: false, `1.5`: false, `1e3`: false, `1234567890123456`: false,
		`"a\"b"`: false, `"\u0061"`: false, `null`: false, `{}`: false, `true`: false, `-`: false,
	} {
		if got := plainID(json.RawMessage(id)); got != want {
			t.Errorf("plainID(%s) = %v, want %v", id, got, want)
		}
	}
}

// manyMembers is n members "k0":0,"k1":1,...
func manyMembers(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return strings.Join(parts, ",")
}

// TestPlainFingerprintMatchesDecoder: the fingerprint of a plain call,
// taken from the fast path's split of the body, is the one fingerprint
// derives from the decoder for the same body, so that a retry is
// recognised whichever path served the first request.
func TestPlainFingerprintMatchesDecoder(t *testing.T) {
	f := &fastPath{tools: map[string]string{"fs": "fs"}, protocols: []string{"2025-06-18"}}
	bodies := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","arguments":{"operation":"stat","path":"/a"}}}`,
		` { "id" : "x-1" , "method":"tools/call","jsonrpc":"2.0","params":{ "arguments" : { "path" : "/a" , "operation":"stat" } ,"name":"fs"} } `,
		`{"jsonrpc":"2.0","id":-7,"method":"tools/call","params":{"name":"fs"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs","arguments":{},"_meta":{"hearth/conversation":"c"}}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"fs\",\"arguments\":{\"data\":\"\\u00e9\\n\\\"\"}}}\n",
	}
	for _, body := range bodies {
		r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		c, ok := f.plain(r, []byte(body))
		if !ok {
			t.Errorf("%s: not plain", body)
			continue
		}
		ri, ok := plainInfo(c, jsonx.Scan([]byte(body), MaxJSONDepth))
		if !ok {
			t.Errorf("%s: refused", body)
			continue
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(body), &msg); err != nil {
			t.Fatal(err)
		}
		if want := callFingerprint(msg.ID, msg.Params.Name, msg.Params.Arguments); ri.FP != want {
			t.Errorf("%s: fingerprint %s from the split, %s from the decoder", body, ri.FP, want)
		}
	}
}

// TestHeaderKeysAreCanonical: the fast path indexes the header map with
// these keys, which finds a value only when the key is canonical.
func TestHeaderKeysAreCanonical(t *testing.T) {
	for _, k := range []string{hdrLastEventID, hdrSessionID, hdrProtocol, hdrContentType, hdrAccept, hdrMethod, hdrName, hdrOrigin, hdrParamPrefix + "X"} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("%q is not canonical (%q)", k, c)
		}
	}
}

// TestPlainHeadersSeeEveryParamHeader: an Mcp-Param- header sends the
// request to the SDK however its key is spelled in the map (a handler's
// own map need not be canonical).
func TestPlainHeadersSeeEveryParamHeader(t *testing.T) {
	f := &fastPath{protocols: []string{"2025-06-18"}}
	req := func() *http.Request {
		r, _ := http.NewRequest("POST", "http://127.0.0.1:9/mcp", strings.NewReader("{}"))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2025-06-18")
		return r
	}
	if !f.plainHeaders(req()) {
		t.Fatal("plain headers refused")
	}
	for _, k := range []string{"Mcp-Param-Path", "mcp-param-path", "MCP-PARAM-PATH", "mCP-pARAM-x"} {
		r := req()
		r.Header[k] = []string{"x"}
		if f.plainHeaders(r) {
			t.Errorf("header %q taken as plain", k)
		}
	}
	for _, accept := range []string{"application/json", "text/event-stream", "application/json,text/event-stream"} {
		r := req()
		r.Header.Set("Accept", accept)
		if got, want := f.plainHeaders(r), accept == "application/json,text/event-stream"; got != want {
			t.Errorf("Accept %q: plain %v, want %v", accept, got, want)
		}
	}
}

// TestLoopbackHost: guard's Host check takes loopback names and addresses
// (with or without a port) and nothing that merely starts like one.
func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:8080": true, "localhost": true, "localhost:1": true, "LocalHost:1": true,
		"[::1]:80": true, "::1": true, "127.0.0.2:5": true,
		"": false, "127.0.0.1.evil.example": false, "localhost.evil.example:80": false, "evil.example": false,
		"10.0.0.1:80": false, "[::2]:80": false, "127.0.0.1:80:80": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
