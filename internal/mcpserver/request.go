package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// MaxJSONDepth bounds how deeply a request's JSON may nest. Hearth's own
// inputs need a handful of levels; the go-sdk's decoder refuses deep
// nesting in plain text, so Hearth refuses it first, as a JSON-RPC error.
const MaxJSONDepth = 128

// fieldPath renders a path as Hearth's validation messages name fields:
// keys joined with dots, indexes in brackets (args[1], files[0].data).
func fieldPath(p []string) string {
	var b strings.Builder
	for i, e := range p {
		if i > 0 && !strings.HasPrefix(e, "[") {
			b.WriteByte('.')
		}
		b.WriteString(strings.ToValidUTF8(e, "\uFFFD"))
	}
	return b.String()
}

// readBody reads the (bounded) body: into exactly its length when known,
// so that a 4 MiB body costs 4 MiB, not the doublings of io.ReadAll.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	if r.ContentLength >= 0 && r.ContentLength <= MaxBodyBytes {
		buf := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(body)
}

// A callHandler serves a request after fingerprint, given what
// fingerprint read of it (a zero wireRequest when it read no body: not a
// POST). It is all fingerprint knows of what comes next: the fast path
// and the SDK each are one.
type callHandler interface {
	serveWire(w http.ResponseWriter, r *http.Request, wire wireRequest)
}

// sdkCalls hands a request to the go-sdk: the body fingerprint read, again,
// and what the tool handler needs of it (handle) in the context.
type sdkCalls struct{ sdk http.Handler }

func (c sdkCalls) serveWire(w http.ResponseWriter, r *http.Request, wire wireRequest) {
	if wire.body != nil {
		r.Body = io.NopCloser(bytes.NewReader(wire.body))
	}
	c.sdk.ServeHTTP(w, withWire(r, wire))
}

// requestNoter is a ResponseWriter that wants the request's id and method
// for the error answers it writes (rpcErrors' writer).
type requestNoter interface {
	noteRequest(id json.RawMessage, method string)
}

// fingerprint reads the (bounded) body, refuses what the SDK would answer
// in plain text or silently alter (not JSON, not a request object, nested
// too deep, invalid UTF-8 outside a tool's arguments) with a JSON-RPC
// error, reads the request in the same walk (readRequest) with its
// fingerprint, and hands it to next. Invalid UTF-8 inside a tool's
// arguments is left to the tool call, which refuses it as invalid_input
// naming the field.
func (s *Server) fingerprint(next callHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.serveWire(w, r, wireRequest{})
			return
		}
		body, err := readBody(w, r)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, fmt.Sprintf("Invalid request: body larger than %d bytes", MaxBodyBytes))
				return
			}
			writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest, "Invalid request: the body could not be read")
			return
		}
		wire, scan := readRequest(body)
		trimmed := bytes.TrimSpace(body)
		// Valid is asked only of a walk that stopped early (too deep).
		if len(trimmed) == 0 || scan.Invalid || scan.TooDeep && !scan.Valid(trimmed) {
			writeRPCError(w, http.StatusBadRequest, nil, codeParseError, "Parse error: request body is not valid JSON")
			return
		}
		if trimmed[0] != '{' && trimmed[0] != '[' {
			writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest, "Invalid request: the body must be a JSON-RPC request object")
			return
		}
		if scan.TooDeep {
			writeRPCError(w, http.StatusBadRequest, nil, codeParseError, fmt.Sprintf("Parse error: JSON nested deeper than %d levels", MaxJSONDepth))
			return
		}
		if n, ok := w.(requestNoter); ok && !wire.malformed {
			n.noteRequest(wire.ID, wire.Method)
		}
		if trimmed[0] == '{' && (wire.malformed || wire.Method == "" && !wire.reply) {
			// Neither a request, a notification nor a response (the SDK
			// would take it for a response and answer 202).
			writeRPCError(w, http.StatusBadRequest, wire.ID, codeInvalidRequest, `Invalid request: a JSON-RPC request needs "jsonrpc":"2.0" and a string "method"`)
			return
		}
		if p := scan.BadPath; p != nil {
			if wire.malformed || wire.Method != "tools/call" || len(p) <= 2 || p[0] != "params" || p[1] != "arguments" {
				writeRPCError(w, http.StatusBadRequest, wire.ID, codeInvalidParams,
					fmt.Sprintf("Invalid params: field %q is not valid UTF-8 (invalid bytes or a lone surrogate escape such as \\ud800)", fieldPath(p)))
				return
			}
			wire.BadUTF8 = fieldPath(p[2:])
		}
		wire.fingerprinted()
		next.serveWire(w, r, wire)
	})
}

// wireRequest is one JSON-RPC message as the HTTP edge read it: the one
// name a tools/call has in this package, from the body's reading to its
// answer. fingerprint reads it once from the body and hands it on; the
// fast path answers from it, and the SDK path hands it to the tool
// handler in the context. Past this package the call is a
// dispatch.Request (decoded and routed), then a callpath.Admission
// (admitted by governance), then what its primitive is told (a
// primitive.Call); its answer is a dispatch.Envelope.
type wireRequest struct {
	// body is the whole body as sent; nil when fingerprint did not read
	// one (not a POST).
	body []byte
	// ID is the request's id as written (nil when absent), Method its
	// method ("" when absent or null).
	ID     json.RawMessage
	Method string
	// Tool is the tool that answers the call, set by the path that takes
	// it (the fast path from its split, the SDK from its own decode);
	// Arguments are its arguments as written and Meta what Hearth reads of
	// its _meta.
	Tool      string
	Arguments json.RawMessage
	Meta      callMeta
	// FP fingerprints the request id together with the tool name and
	// arguments, so a retry of the same request is recognised without
	// storing the raw id.
	FP string
	// BadUTF8 names the first field of the tool's arguments that is not
	// valid UTF-8 (Go's decoder would have replaced it with U+FFFD).
	BadUTF8 string

	// malformed: the decoder would refuse the message's shape (a method
	// or a tool name that is not a string, params that are not an object).
	malformed bool
	// reply: the message has a result or an error member (a response).
	reply bool
	// split: the members below were split from the body as written; a
	// body the split cannot read as the decoder would is decoded instead,
	// and never takes the fast path.
	split bool
	// The members the fast path reads, as written: the top level's count,
	// its jsonrpc, method and params, and params' name and _meta.
	members                     int
	version, method, params     json.RawMessage
	name, meta                  json.RawMessage
	paramsObject, paramsUnknown bool
	// metaMembers[:metaCount] are _meta's members as the body's walk
	// recorded them; metaObject: they are all of them, _meta being one
	// object of at most maxMembers members, none written with an escape
	// or twice (what the fast path reads; anything else goes to the SDK).
	metaMembers [maxMembers]jsonx.Member
	metaCount   int
	metaObject  bool
	// modern: the fast path took it on the 2026-07-28 wire.
	modern bool
}

// maxMembers bounds the objects the edge splits (the request, its params
// and their _meta, the fast path's small objects): a larger one is
// decoded instead (and its repeated-key check would grow with the
// square). Their members are kept in buffers of this size, on the stack.
const maxMembers = 16

// The objects whose members the body's walk records: the request, its
// params and params' _meta.
var recordPaths = [...][]string{nil, {"params"}, {"params", "_meta"}}

// The members the split reads, each level's in one list: the value of
// the i-th key goes to the i-th place splitMembers is given. A key in
// another case than one of these is not split (the decoder would match
// it).
var (
	topKeys    = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}
	paramsKeys = [...]string{"name", "arguments", "_meta"}
)

// readRequest reads a body in one walk (jsonx.ScanRecording): its
// grammar, depth and strings (what fingerprint refuses), and the members
// of the request, of its params and of their _meta, as written. A valid
// body is split by those members when they read as encoding/json reads
// them, and decoded otherwise (a key repeated, escaped or written in
// another case, more than maxMembers members, not an object).
func readRequest(body []byte) (wire wireRequest, scan jsonx.ScanResult) {
	trimmed := bytes.TrimSpace(body)
	var topBuf, paramsBuf [maxMembers]jsonx.Member
	recs := [len(recordPaths)]jsonx.Record{
		{Path: recordPaths[0], Members: topBuf[:0]},
		{Path: recordPaths[1], Members: paramsBuf[:0]},
		{Path: recordPaths[2], Members: wire.metaMembers[:0]},
	}
	scan = jsonx.ScanRecording(trimmed, MaxJSONDepth, recs[:])
	if len(trimmed) == 0 || scan.Invalid || scan.TooDeep {
		return wireRequest{body: body}, scan // fingerprint refuses it
	}
	wire.body = body
	if !wire.splitRecords(&recs) {
		return decodeRequest(body), scan
	}
	return wire, scan
}

// splitRecords sets the members from the walk's records; false when they
// cannot stand for the decoder's reading.
func (wire *wireRequest) splitRecords(recs *[len(recordPaths)]jsonx.Record) bool {
	top, params, meta := &recs[0], &recs[1], &recs[2]
	var result, errorMember json.RawMessage
	if _, ok := splitMembers(top, topKeys[:], &wire.version, &wire.ID, &wire.method, &wire.params, &result, &errorMember); !ok {
		return false
	}
	wire.split, wire.members, wire.reply = true, len(top.Members), result != nil || errorMember != nil
	var ok bool
	if wire.Method, ok = stringMember(wire.method); !ok {
		wire.malformed = true
	}
	switch {
	case wire.params == nil || string(wire.params) == "null":
	case wire.params[0] != '{':
		wire.malformed = true
	default:
		if wire.paramsUnknown, ok = splitMembers(params, paramsKeys[:], &wire.name, &wire.Arguments, &wire.meta); !ok {
			return false
		}
		wire.paramsObject = true
		if n := wire.name; n != nil && string(n) != "null" && n[0] != '"' {
			wire.malformed = true // the decoder reads the name into a string
		}
	}
	wire.metaCount = len(meta.Members)
	wire.metaObject = wire.meta != nil && meta.Found == 1 && !meta.Full && !meta.Repeated && !meta.Escaped
	return true
}

// splitMembers reads one recorded object: the value of keys[i] into
// *dst[i]; unknown reports a member of another key. ok is false when the
// record cannot stand for the decoder's reading: not one object, more
// members than it holds, a key escaped or repeated, or written in another
// case than one of keys.
func splitMembers(rec *jsonx.Record, keys []string, dst ...*json.RawMessage) (unknown, ok bool) {
	if rec.Found != 1 || rec.Full || rec.Escaped || rec.Repeated {
		return false, false
	}
next:
	for _, m := range rec.Members {
		for i, k := range keys {
			if string(m.Key) == k {
				*dst[i] = m.Value
				continue next
			}
		}
		if foldsTo(m.Key, keys) {
			return false, false
		}
		unknown = true
	}
	return unknown, true
}

// foldsTo reports whether key is one of keys in another case (the
// decoder would match it).
func foldsTo(key []byte, keys []string) bool {
	for _, k := range keys {
		if strings.EqualFold(string(key), k) {
			return true
		}
	}
	return false
}

// stringMember is a member's string value as the decoder reads it into a
// string: "" when absent or null; ok false when it is not a string.
func stringMember(raw json.RawMessage) (string, bool) {
	switch {
	case raw == nil || string(raw) == "null":
		return "", true
	case string(raw) == `"tools/call"`:
		return "tools/call", true // the usual method, without a copy
	case raw[0] != '"':
		return "", false
	}
	s, err := jsonx.Unquote(raw)
	return s, err == nil
}

// decodeRequest is readRequest through encoding/json, for a body the
// split does not read.
func decodeRequest(body []byte) wireRequest {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	err := json.Unmarshal(body, &msg)
	wire := wireRequest{body: body, ID: msg.ID, Method: msg.Method, Arguments: msg.Params.Arguments,
		malformed: err != nil, reply: msg.Result != nil || msg.Error != nil}
	if msg.Params.Name != "" {
		wire.name, _ = json.Marshal(msg.Params.Name)
	}
	return wire
}

// toolName is the name the request's params give, as the decoder reads it.
func (wire *wireRequest) toolName() []byte {
	if n := wire.name; len(n) >= 2 && n[0] == '"' && bytes.IndexByte(n, '\\') < 0 {
		return n[1 : len(n)-1] // a string of valid JSON without escapes
	}
	s, _ := stringMember(wire.name)
	return []byte(s)
}

// fingerprinted sets FP: a tools/call with an id, whose shape the decoder
// reads, has one.
func (wire *wireRequest) fingerprinted() {
	if !wire.malformed && len(wire.ID) > 0 && wire.Method == "tools/call" {
		wire.FP = callFingerprint(wire.ID, wire.toolName(), wire.Arguments)
	}
}

type wireRequestKey struct{}

// wireNote is what the SDK path's tool handler needs of the wireRequest
// fingerprint read (the rest it reads from the SDK's decode): small, as
// it is put in the context of every call on that path.
type wireNote struct{ fp, badUTF8 string }

// wireFrom is the wireRequest the SDK path put in the context of a tool
// handler (zero when there is none).
func wireFrom(ctx context.Context) wireRequest {
	note, _ := ctx.Value(wireRequestKey{}).(wireNote)
	return wireRequest{FP: note.fp, BadUTF8: note.badUTF8}
}

// withWire gives r's handlers what fingerprint learned of wire, in a new
// context; r itself when there is nothing to give.
func withWire(r *http.Request, wire wireRequest) *http.Request {
	if wire.FP == "" && wire.BadUTF8 == "" {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), wireRequestKey{}, wireNote{fp: wire.FP, badUTF8: wire.BadUTF8}))
}

// callFingerprint is a tools/call request's FP.
func callFingerprint(id json.RawMessage, tool []byte, arguments json.RawMessage) string {
	// One buffer on the stack for a call of ordinary size, hashed at once.
	var stack [1024]byte
	b := stack[:0]
	if n := len(id) + len(tool) + len(arguments) + 2; n > len(stack) {
		b = make([]byte, 0, n)
	}
	b = append(append(append(append(append(b, id...), 0), tool...), 0), arguments...)
	sum := sha256.Sum256(b)
	var text [2 * sha256.Size]byte
	return string(hex.AppendEncode(text[:0], sum[:]))
}
