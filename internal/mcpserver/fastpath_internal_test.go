package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
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
			got[string(m.Key)] = m.Value
		}
		if len(got) != len(split) {
			t.Errorf("%s: a key split twice: %d members", c.in, len(split))
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
// taken from the split of its body the fast path answers from, is the one
// derived from the decoder for the same body, so that a retry is
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
		wire, _ := readRequest([]byte(body))
		if !f.plain(r, &wire) {
			t.Errorf("%s: not plain", body)
			continue
		}
		wire.fingerprinted()
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
		if want := callFingerprint(msg.ID, []byte(msg.Params.Name), msg.Params.Arguments); wire.FP != want || want == "" {
			t.Errorf("%s: fingerprint %s from the split, %s from the decoder", body, wire.FP, want)
		}
	}
}

// TestSplitRequestMatchesDecoder: where readRequest splits a body, it reads
// what encoding/json decodes of it (id, method, the tool's name and
// arguments, a reply's members, a shape the decoder refuses, and so the
// fingerprint); where it cannot (a key repeated, escaped or in another
// case), it decodes.
func TestSplitRequestMatchesDecoder(t *testing.T) {
	cases := []struct {
		body  string
		split bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","arguments":{"operation":"stat"}}}`, true},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, true},
		{`{"jsonrpc":"2.0","id":1,"error":null}`, true},
		{`{"jsonrpc":"2.0","id":null,"method":null}`, true},
		{`{"jsonrpc":"2.0","id":1}`, true},
		{`{}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"f\u0073","arguments":{}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"arguments":{}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":null,"arguments":[1],"other":1,"_meta":{}}}`, true},
		{`{"jsonrpc":"2.0","ID":1,"method":"tools/call","params":{"name":"fs"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"fs"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","PARAMS":{"name":"fs"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"fs","arguments":{}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","ARGUMENTS":{}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","name":"task"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"m\u0065thod":"tools/call"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"fs"}}`, false},
		{`{"JSONRPC":"2.0","id":1,"method":"tools/call","params":{"name":"fs"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","_META":{}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs"},"params":{"name":"fs"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","_meta":{"a\u0062":1,"a":1,"a":2}}}`, true},
		{` {"jsonrpc" : "2.0" ,"id":1 , "method" : "tools/call","params" : { "name" : "fs" , "arguments" : { "a" : 1 } } } `, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + manyMembers(maxMembers) + `}}`, true},
		{`{` + manyMembers(maxMembers+1) + `}`, false},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + manyMembers(maxMembers+1) + `}}`, false},
	}
	for _, c := range cases {
		got, _ := readRequest([]byte(c.body))
		if got.split != c.split {
			t.Errorf("%s: split %v, want %v", c.body, got.split, c.split)
		}
		checkSplitAsDecoder(t, []byte(c.body), got)
	}
}

// checkSplitAsDecoder: what readRequest read of body is what the decoder
// reads of it.
func checkSplitAsDecoder(t *testing.T, body []byte, got wireRequest) {
	t.Helper()
	want := decodeRequest(body)
	if string(got.ID) != string(want.ID) || got.Method != want.Method || got.malformed != want.malformed || got.reply != want.reply ||
		string(got.Arguments) != string(want.Arguments) {
		t.Errorf("%q:\nsplit   id %s method %q malformed %v reply %v arguments %s\ndecoder id %s method %q malformed %v reply %v arguments %s",
			body, got.ID, got.Method, got.malformed, got.reply, got.Arguments, want.ID, want.Method, want.malformed, want.reply, want.Arguments)
	}
	if !got.malformed && string(got.toolName()) != string(want.toolName()) {
		t.Errorf("%q: tool name %q from the split, %q from the decoder", body, got.toolName(), want.toolName())
	}
	got.fingerprinted()
	want.fingerprinted()
	if got.FP != want.FP {
		t.Errorf("%q: fingerprint %q from the split, %q from the decoder", body, got.FP, want.FP)
	}
}

// FuzzReadRequest: for any body the walk finds valid (and free of bad
// strings, which the decoder would alter), the request readRequest reads
// from the walk's records is the one encoding/json decodes, and the
// _meta members it records for the fast path are the decoder's.
func FuzzReadRequest(f *testing.F) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","arguments":{"operation":"stat"},"_meta":{"hearth/conversation":"c"}}}`,
		` { "id" : "x" , "method" : "tools/call" , "params" : { "name" : "fs" , "arguments" : { "params" : { "_meta" : 1 } } } } `,
		`{"jsonrpc":"2.0","id":1,"m\u0065thod":"tools/call","params":{"n\u0061me":"fs","_meta":{"k\u0031":1}}}`,
		`{"id":1,"id":2,"method":"x","params":{"name":"a","name":"b","_meta":{"k":1,"k":2}}}`,
		`{"ID":1,"Method":"x","params":{"Name":"a","ARGUMENTS":{},"_META":{}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":null}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"method":"tools/call","params":[1],"id":null}`,
		`{"method":"tools/call","params":{"name":5,"_meta":5}}`,
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, scan := readRequest(body)
		if scan.Invalid || scan.TooDeep || scan.BadPath != nil || len(bytes.TrimSpace(body)) == 0 {
			return
		}
		checkSplitAsDecoder(t, body, got)
		if !got.metaObject {
			return
		}
		var msg struct {
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &msg); err != nil {
			t.Fatalf("%q: split with a plain _meta, the decoder: %v", body, err)
		}
		meta := members(got.metaMembers[:got.metaCount])
		if len(meta) != len(msg.Params.Meta) {
			t.Errorf("%q: %d _meta members recorded, the decoder reads %d", body, len(meta), len(msg.Params.Meta))
		}
		for k, v := range msg.Params.Meta {
			if string(meta.get(k)) != string(v) {
				t.Errorf("%q: _meta %q recorded %s, the decoder reads %s", body, k, meta.get(k), v)
			}
		}
	})
}

// TestMetaRecorded: the walk's record of params._meta is what the fast
// path reads, and only when it is one object of members each written
// once, none with an escape, at most maxMembers.
func TestMetaRecorded(t *testing.T) {
	call := func(meta string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs","arguments":{"_meta":{"x":1}},"_meta":` + meta + `}}`
	}
	cases := []struct {
		body   string
		object bool
		keys   string
	}{
		{call(`{"hearth/conversation":"c","k":[1,{"a":2}]}`), true, "hearth/conversation k"},
		{call(`{ }`), true, ""},
		{call(`{"hearth/c\u006fnversation":"c"}`), false, `hearth/c\u006fnversation`},
		{call(`{"k":1,"k":2}`), false, "k k"},
		{call(`{"K":1,"k":2}`), true, "K k"},
		{call(`5`), false, ""},
		{call(`null`), false, ""},
		{call(`[{"k":1}]`), false, ""},
		{call(`{` + manyMembers(maxMembers) + `}`), true, metaKeys(maxMembers)},
		{call(`{` + manyMembers(maxMembers+1) + `}`), false, metaKeys(maxMembers)},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fs"}}`, false, ""},
	}
	for _, c := range cases {
		wire, _ := readRequest([]byte(c.body))
		if !wire.split {
			t.Errorf("%s: not split", c.body)
			continue
		}
		var keys []string
		for _, m := range wire.metaMembers[:wire.metaCount] {
			keys = append(keys, string(m.Key))
		}
		if wire.metaObject != c.object || strings.Join(keys, " ") != c.keys {
			t.Errorf("%s: meta object %v with keys %q, want %v with %q", c.body, wire.metaObject, strings.Join(keys, " "), c.object, c.keys)
		}
	}
}

// metaKeys is the keys of manyMembers(n), joined with spaces.
func metaKeys(n int) string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	return strings.Join(keys, " ")
}

// wireRecorder is a callHandler that keeps what it was given.
type wireRecorder struct{ got []wireRequest }

func (c *wireRecorder) serveWire(w http.ResponseWriter, r *http.Request, wire wireRequest) {
	c.got = append(c.got, wire)
	w.WriteHeader(http.StatusNoContent)
}

// TestFingerprintHandsOnWhatItRead: fingerprint hands whatever handler
// follows it the request it read (no second reading), fingerprinted, with
// the field of invalid UTF-8 in the arguments named; a request it refuses
// reaches no handler.
func TestFingerprintHandsOnWhatItRead(t *testing.T) {
	rec := &wireRecorder{}
	h := (&Server{}).fingerprint(rec)
	send := func(body string) int {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body)))
		return w.Code
	}
	call := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fs","arguments":{"operation":"write","path":"/a","content":"x\ud800"}}}`
	if code := send(call); code != http.StatusNoContent || len(rec.got) != 1 {
		t.Fatalf("status %d, %d requests handed on", code, len(rec.got))
	}
	wire := rec.got[0]
	if string(wire.body) != call || string(wire.ID) != "4" || wire.Method != "tools/call" || !wire.split || wire.FP == "" || wire.BadUTF8 != "content" {
		t.Errorf("handed on %+v", wire)
	}
	if code := send(`{"jsonrpc":"2.0","id":5,"method":"x\ud800"}`); code != http.StatusBadRequest || len(rec.got) != 1 {
		t.Errorf("a method of invalid UTF-8: status %d, %d requests handed on", code, len(rec.got))
	}
	// Invalid UTF-8 in the arguments does not end the walk: nesting past
	// the bound after it is still refused.
	deep := `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"fs","arguments":{"operation":"write","path":"/a","content":"x\ud800","x":` +
		strings.Repeat("[", MaxJSONDepth+2) + strings.Repeat("]", MaxJSONDepth+2) + `}}}`
	if code := send(deep); code != http.StatusBadRequest || len(rec.got) != 1 {
		t.Errorf("nesting past the bound after invalid UTF-8: status %d, %d requests handed on", code, len(rec.got))
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
