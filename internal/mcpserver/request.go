package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	// modern: the fast path took it on the 2026-07-28 wire.
	modern bool
}

// The message members the decoder reads (it matches keys in any case).
var (
	topKeys    = [...]string{"id", "method", "params", "result", "error"}
	paramsKeys = [...]string{"name", "arguments"}
)

// readRequest reads a body that Scan found valid JSON: split by the
// members as written when it can read them as encoding/json would,
// decoded otherwise (a key repeated, escaped or written in another case,
// more than maxMembers members).
func readRequest(body []byte) wireRequest {
	if wire, ok := splitRequest(body); ok {
		return wire
	}
	return decodeRequest(body)
}

// splitRequest is readRequest's split; ok is false when it cannot stand
// for the decoder's reading.
func splitRequest(body []byte) (wire wireRequest, ok bool) {
	wire.body, wire.split = body, true
	var topBuf [8]member
	top, ok := objectFields(body, topBuf[:0])
	if !ok {
		return wire, false
	}
	wire.members = len(top)
	for _, m := range top {
		switch string(m.key) {
		case "jsonrpc":
			wire.version = m.val
		case "id":
			wire.ID = m.val
		case "method":
			wire.method = m.val
		case "params":
			wire.params = m.val
		case "result", "error":
			wire.reply = true
		default:
			if foldsTo(m.key, topKeys[:]) {
				return wire, false
			}
		}
	}
	if wire.Method, ok = stringMember(wire.method); !ok {
		wire.malformed = true
	}
	switch {
	case wire.params == nil || string(wire.params) == "null":
	case wire.params[0] != '{':
		wire.malformed = true
	default:
		var paramsBuf [8]member
		params, ok := objectFields(wire.params, paramsBuf[:0])
		if !ok {
			return wire, false
		}
		wire.paramsObject = true
		for _, m := range params {
			switch string(m.key) {
			case "name":
				wire.name = m.val
			case "arguments":
				wire.Arguments = m.val
			case "_meta":
				wire.meta = m.val
			default:
				if foldsTo(m.key, paramsKeys[:]) {
					return wire, false
				}
				wire.paramsUnknown = true
			}
		}
		if n := wire.name; n != nil && string(n) != "null" && n[0] != '"' {
			wire.malformed = true // the decoder reads the name into a string
		}
	}
	return wire, true
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

// wireFrom is the wireRequest the SDK path put in the context of a tool
// handler (zero when there is none).
func wireFrom(ctx context.Context) wireRequest {
	wire, _ := ctx.Value(wireRequestKey{}).(wireRequest)
	return wire
}

// withWire gives r's handlers what fingerprint learned of wire, in a new
// context; r itself when there is nothing to give.
func withWire(r *http.Request, wire wireRequest) *http.Request {
	if wire.FP == "" && wire.BadUTF8 == "" {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), wireRequestKey{}, wireRequest{FP: wire.FP, BadUTF8: wire.BadUTF8}))
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

// members are a JSON object's members, in order.
type members []member

type member struct {
	key []byte // as written (never with escapes)
	val json.RawMessage
}

// get is the value of key, or nil.
func (ms members) get(key string) json.RawMessage {
	for _, m := range ms {
		if string(m.key) == key {
			return m.val
		}
	}
	return nil
}

// maxMembers bounds the objects objectFields splits: a larger one is not
// plain (and its repeated-key check would grow with the square).
const maxMembers = 64

// objectFields splits a JSON object into its members, appended to buf,
// refusing anything else, any key written with escapes, any object with a
// repeated key (decoders disagree on those) and any with more than
// maxMembers. raw must be part of a body fingerprint has checked to be
// valid JSON.
func objectFields(raw json.RawMessage, buf members) (members, bool) {
	fields := buf[:0]
	it := jsonx.WalkObject(raw)
	for it.Next() {
		key := it.Key()
		if len(fields) == maxMembers || fields.get(string(key)) != nil {
			return nil, false
		}
		fields = append(fields, member{key: key, val: it.Value()})
	}
	if !it.OK() {
		return nil, false
	}
	return fields, true
}
