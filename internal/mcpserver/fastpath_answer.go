package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/jsonx"
)

// This file writes the fast path's answer, byte for byte the SDK's;
// fastpath.go decides which requests take the fast path.

// The fast path's response headers, shared by every answer (a value's
// length is its capacity, so an Add copies it instead of writing into it).
var (
	noCache     = []string{"no-cache, no-transform"}
	contentJSON = []string{"application/json"}
)

// serve runs the tool call the SDK's handler would run and writes the
// SDK's answer: one JSON-RPC response, 200, application/json.
func (f *fastPath) serve(w http.ResponseWriter, r *http.Request, wire wireRequest) {
	f.s.fastCalls.Add(1)
	env, probe := f.s.answer(r.Context(), &wire)
	bufs := getAnswerBufs()
	defer putAnswerBufs(bufs)
	out, err := f.encode(&wire, env, probe, bufs)
	h := w.Header()
	h["Cache-Control"], h["Content-Type"] = noCache, contentJSON
	if err != nil {
		// The SDK answers a handler's error as a JSON-RPC error without a
		// code (render fails only when the envelope cannot be encoded).
		msg, _ := json.Marshal(err.Error())
		out = []byte(`{"jsonrpc":"2.0","id":` + string(wire.ID) + `,"error":{"code":0,"message":` + string(msg) + `}}`)
	}
	w.Write(out)
}

// encode writes the JSON-RPC response the SDK writes for render's result,
// encoding the envelope once: the same members (on the 2026-07-28 wire
// the server's info in _meta and resultType "complete"), the text content
// holding the same text.
func (f *fastPath) encode(wire *wireRequest, env *dispatch.Envelope, probe *RouteProbe, bufs *answerBufs) ([]byte, error) {
	b, ok := appendEnvelope(bufs.env[:0], env, probe)
	if bufs.env = b; !ok {
		var err error
		if b, err = encodeEnvelope(env, probe); err != nil {
			return nil, err
		}
	}
	summary := summaryText(env, probe)
	out := slices.Grow(bufs.out[:0], 2*len(b)+2*len(summary)+len(f.serverInfo)+160)
	defer func() { bufs.out = out }()
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, wire.ID...)
	out = append(out, `,"result":{`...)
	if wire.modern {
		out = append(out, `"_meta":{"`+mcp.MetaKeyServerInfo+`":`...)
		out = append(out, f.serverInfo...)
		out = append(out, `},`...)
	}
	out = append(out, `"content":[{"type":"text","text":`...)
	// The text goes on after the summary's line: its closing quote is
	// taken off again.
	out = jsonx.AppendString(out, summary)
	out = append(out[:len(out)-1], `\n`...)
	switch {
	case len(b) > maxText:
		out = append(out, fullInStructured...)
	case utf8.Valid(b):
		out = appendInString(out, b)
	default:
		// Not from encoding/json alone (a raw message with invalid UTF-8):
		// encode it as the SDK does.
		s, err := json.Marshal(string(b))
		if err != nil {
			return nil, fmt.Errorf("encode result: %w", err)
		}
		out = append(out, s[1:len(s)-1]...)
	}
	out = append(out, `"}`...)
	if mt, data := resultImage(env); data != nil {
		// As the SDK writes an ImageContent.
		out = append(out, `,{"type":"image","mimeType":`...)
		out = jsonx.AppendString(out, mt)
		out = append(out, `,"data":"`...)
		out = base64.StdEncoding.AppendEncode(out, data)
		out = append(out, '"', '}')
	}
	out = append(out, `],"structuredContent":`...)
	out = append(out, b...)
	if env.IsError() {
		out = append(out, `,"isError":true`...)
	}
	if wire.modern {
		out = append(out, `,"resultType":"complete"`...)
	}
	return append(out, "}}"...), nil
}

// answerBufs are the buffers an answer is encoded in, kept for the next
// answers once it is written (net/http has copied it): an ordinary answer
// then allocates none.
type answerBufs struct{ env, out []byte }

var answerPool = sync.Pool{New: func() any { return &answerBufs{env: make([]byte, 0, 1024), out: make([]byte, 0, 4096)} }}

// maxKeptAnswer bounds the buffers kept: a large answer's are left to the
// collector.
const maxKeptAnswer = 64 << 10

func getAnswerBufs() *answerBufs { return answerPool.Get().(*answerBufs) }

func putAnswerBufs(b *answerBufs) {
	if cap(b.env) <= maxKeptAnswer && cap(b.out) <= maxKeptAnswer {
		answerPool.Put(b)
	}
}

// appendInString appends doc, valid UTF-8 JSON as encoding/json writes
// it, as the inside of a JSON string: only quotes and backslashes need an
// escape (encoding/json has escaped every control character, and no
// whitespace lies between its tokens).
func appendInString(out, doc []byte) []byte {
	start := 0
	for i, c := range doc {
		if c == '"' || c == '\\' {
			out = append(append(out, doc[start:i]...), '\\', c)
			start = i + 1
		}
	}
	return append(out, doc[start:]...)
}
