package mcpserver

import (
	"bytes"
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// The fast path answers a plain stateless tools/call itself instead of
// handing it to the go-sdk, whose stateless handler builds a session for
// every request and decodes and re-encodes the message several times.
//
// It sits behind guard and fingerprint (Host/Origin checks, the body
// bound, the JSON and UTF-8 refusals and the request fingerprint all run
// first, unchanged), as the callHandler fingerprint hands the request it
// read (the wireRequest: the fast path reads no body of its own), and
// calls the same answer the SDK's tool handler calls, with the same
// request context, so governance, conversation routing,
// at-least-once delivery and the invalid-UTF-8 refusal are the ones of
// the SDK path. It answers what the SDK would answer for the same
// request: the same JSON-RPC response, status and headers.
//
// Only a request that is plainly ordinary takes it; anything else, and
// anything unusual (a batch, a notification, another method, an unknown
// tool, missing or mismatched protocol headers, a _meta the SDK would
// inspect or refuse, fields the SDK would act on), goes to the SDK
// untouched. TestFastPathMatchesSDK sends a corpus through both.

// Protocol versions the fast path answers. Each is also required to be one
// the go-sdk serves (fastProtocols filters them at start-up).
const (
	protoModern = "2026-07-28"
)

var fastProtocolsWanted = [...]string{"2025-06-18", "2025-11-25", protoModern}

// SDK _meta keys of the 2026-07-28 wire (SEP-2575).
const (
	metaPrefix       = "io.modelcontextprotocol/"
	metaProtocol     = metaPrefix + "protocolVersion"
	metaClientInfo   = metaPrefix + "clientInfo"
	metaCapabilities = metaPrefix + "clientCapabilities"
)

// fastPath is the middleware; next is the SDK.
type fastPath struct {
	s         *Server
	next      callHandler
	tools     map[string]string // each tool it answers, by its name
	protocols []string
	// serverInfo is the encoded implementation() of a 2026-07-28 result's
	// _meta.
	serverInfo []byte
}

func (s *Server) fastPath(next callHandler) *fastPath {
	f := &fastPath{s: s, next: next, tools: map[string]string{}}
	for _, t := range tools {
		if len(s.Registry.Operations(t.Name)) > 0 {
			f.tools[t.Name] = t.Name
		}
	}
	supported := mcp.SupportedProtocolVersions()
	for _, v := range fastProtocolsWanted {
		if slices.Contains(supported, v) {
			f.protocols = append(f.protocols, v)
		}
	}
	f.serverInfo, _ = json.Marshal(s.implementation())
	return f
}

// serveWire answers a plain call (take) itself and hands anything else to
// next.
func (f *fastPath) serveWire(w http.ResponseWriter, r *http.Request, wire wireRequest) {
	if f.take(r, &wire) {
		f.serve(w, r, wire)
		return
	}
	f.next.serveWire(w, r, wire)
}

// take reports whether wire is a plain call the fast path answers, and
// sets what its answer needs (its tool, its _meta, the 2026-07-28 wire).
func (f *fastPath) take(r *http.Request, wire *wireRequest) bool {
	if r.Method != http.MethodPost || !wire.split || !f.plainHeaders(r) {
		return false
	}
	return f.plain(r, wire)
}

// plainHeaders reports whether the headers are ones the SDK accepts for a
// stateless JSON POST and whose handling the fast path knows exactly.
func (f *fastPath) plainHeaders(r *http.Request) bool {
	h := r.Header
	if len(h[hdrLastEventID]) > 0 || len(h[hdrSessionID]) > 0 {
		return false
	}
	for k := range h {
		// Only a key of this length starting with m or M can be one.
		if len(k) >= len(hdrParamPrefix) && k[0]|0x20 == 'm' && strings.HasPrefix(http.CanonicalHeaderKey(k), hdrParamPrefix) {
			return false
		}
	}
	if pv := h[hdrProtocol]; len(pv) != 1 || !slices.Contains(f.protocols, pv[0]) {
		return false
	}
	if ct := firstValue(h, hdrContentType); ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return false
		}
	}
	if !acceptsBoth(h[hdrAccept]) {
		return false
	}
	return plainLoopbackHost(r.Host)
}

// The headers the fast path reads, as canonical keys: the map is indexed
// with them directly (Header.Get canonicalizes its key on every call).
// TestHeaderKeysAreCanonical holds them canonical.
const (
	hdrLastEventID = "Last-Event-Id"
	hdrSessionID   = "Mcp-Session-Id"
	hdrProtocol    = "Mcp-Protocol-Version"
	hdrContentType = "Content-Type"
	hdrAccept      = "Accept"
	hdrMethod      = "Mcp-Method"
	hdrName        = "Mcp-Name"
	hdrOrigin      = "Origin"
	hdrParamPrefix = "Mcp-Param-"
)

// firstValue is h.Get(key) for a canonical key.
func firstValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// acceptsBoth reports whether Accept names application/json and
// text/event-stream (or */*) as media ranges. It is narrower than the
// SDK's check (which also takes application/* and text/*): a header it
// does not recognise goes to the SDK.
func acceptsBoth(values []string) bool {
	if len(values) == 1 && values[0] == "application/json, text/event-stream" {
		return true // what the go-sdk's and the TypeScript SDK's clients send
	}
	json, stream := false, false
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				json = true
			case "text/event-stream":
				stream = true
			case "*/*":
				json, stream = true, true
			}
		}
	}
	return json && stream
}

// plainLoopbackHost is narrower than guard's loopbackHost: only the
// spellings every Host check (Hearth's and the SDK's) accepts alike.
func plainLoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return host == "127.0.0.1" || host == "localhost" || host == "::1"
}

// plain reports whether wire, split from its body, is a plain tools/call.
func (f *fastPath) plain(r *http.Request, wire *wireRequest) bool {
	if wire.members != 4 || string(wire.version) != `"2.0"` || string(wire.method) != `"tools/call"` || !plainID(wire.ID) ||
		!wire.paramsObject || wire.paramsUnknown {
		return false
	}
	if !plainString(wire.name) {
		return false
	}
	if wire.Tool = f.tools[string(wire.name[1:len(wire.name)-1])]; wire.Tool == "" {
		return false
	}
	if a := wire.Arguments; a != nil && a[0] != '{' {
		return false
	}
	pv := firstValue(r.Header, hdrProtocol)
	wire.modern = pv == protoModern
	if wire.modern && (firstValue(r.Header, hdrMethod) != "tools/call" || firstValue(r.Header, hdrName) != wire.Tool) {
		return false
	}
	if wire.meta == nil {
		// The 2026-07-28 wire requires its _meta triple; without it the SDK
		// answers an error.
		return !wire.modern
	}
	meta := members(wire.metaMembers[:wire.metaCount])
	if !wire.metaObject || !plainMeta(meta, pv, wire.modern) {
		return false
	}
	var ok bool
	wire.Meta, ok = metaFrom(meta)
	return ok
}

// metaFrom is the callMeta of the request's _meta members, each value as
// the SDK decodes it: a string without escapes copied, anything else
// decoded (false when a value of any key would not decode, which the SDK
// refuses); the SDK's own keys (checked by plainMeta) are read by no
// handler.
func metaFrom(meta members) (callMeta, bool) {
	var m callMeta
	for _, x := range meta {
		var dst *any
		switch string(x.Key) {
		case metaSession:
			dst = &m.session
		case metaConversation:
			dst = &m.conversation
		case metaCommandID:
			dst = &m.commandID
		}
		switch {
		case plainString(x.Value):
			if dst != nil {
				*dst = string(x.Value[1 : len(x.Value)-1])
			}
		case bytes.HasPrefix(x.Key, []byte(metaPrefix)):
		default:
			var v any
			if err := json.Unmarshal(x.Value, &v); err != nil {
				return m, false
			}
			if dst != nil {
				*dst = v
			}
		}
	}
	return m, true
}

// plainMeta checks the request's _meta: on the older wires it may carry
// no key of the SDK's own (they would switch the SDK to per-request
// protocol handling), on 2026-07-28 exactly the protocol version of the
// header, the client's capabilities and optionally its info, in the
// plainest shapes. A progress token goes to the SDK, which sends progress
// notifications for it.
func plainMeta(meta members, header string, modern bool) bool {
	if meta.get("progressToken") != nil {
		return false
	}
	for _, m := range meta {
		k, v := string(m.Key), m.Value
		if !strings.HasPrefix(k, metaPrefix) {
			continue
		}
		if !modern {
			return false
		}
		switch k {
		case metaProtocol:
			if !plainString(v) || string(v[1:len(v)-1]) != header {
				return false
			}
		case metaClientInfo:
			if !plainClientInfo(v) {
				return false
			}
		case metaCapabilities:
			if !plainCapabilities(v) {
				return false
			}
		default:
			return false
		}
	}
	if !modern {
		return true
	}
	return meta.get(metaProtocol) != nil && meta.get(metaCapabilities) != nil
}

// plainClientInfo: an object of plain string fields of an Implementation.
func plainClientInfo(raw json.RawMessage) bool {
	var buf [8]jsonx.Member
	info, ok := objectFields(raw, buf[:0])
	if !ok {
		return false
	}
	for _, m := range info {
		switch v := m.Value; string(m.Key) {
		case "name", "title", "description", "version", "websiteUrl":
			if !plainString(v) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// plainCapabilities: an object of capabilities in the shapes every
// decoder reads alike: roots with at most a boolean listChanged,
// experimental and extensions as objects, sampling and elicitation empty.
func plainCapabilities(raw json.RawMessage) bool {
	var buf, fieldsBuf [8]jsonx.Member
	caps, ok := objectFields(raw, buf[:0])
	if !ok {
		return false
	}
	for _, m := range caps {
		fields, ok := objectFields(m.Value, fieldsBuf[:0])
		if !ok {
			return false
		}
		switch string(m.Key) {
		case "roots":
			for _, f := range fields {
				if string(f.Key) != "listChanged" || (string(f.Value) != "true" && string(f.Value) != "false") {
					return false
				}
			}
		case "experimental", "extensions":
		case "sampling", "elicitation":
			if len(fields) != 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// plainString: a JSON string without escapes.
func plainString(raw json.RawMessage) bool {
	return len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 &&
		bytes.IndexByte(raw[1:len(raw)-1], '"') < 0
}

// plainID: a string without escapes, or an integer of at most 15 digits
// (exact in every decoder) other than -0.
func plainID(raw json.RawMessage) bool {
	if plainString(raw) {
		return true
	}
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
		if string(digits) == "0" {
			return false
		}
	}
	if len(digits) == 0 || len(digits) > 15 || digits[0] == '0' && len(digits) > 1 {
		return false
	}
	for _, d := range digits {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}

// members are a JSON object's members, in order, as written (never with
// escapes: the walk and the split refuse those).
type members []jsonx.Member

// get is the value of key, or nil.
func (ms members) get(key string) json.RawMessage {
	for _, m := range ms {
		if string(m.Key) == key {
			return m.Value
		}
	}
	return nil
}

// objectFields splits a small JSON object the fast path checks inside
// _meta (clientInfo, capabilities: the body's walk records no deeper)
// into its members, appended to buf, refusing anything else, any key
// written with escapes, any object with a repeated key (decoders disagree
// on those) and any with more than maxMembers. raw must be part of a body
// fingerprint has checked to be valid JSON.
func objectFields(raw json.RawMessage, buf members) (members, bool) {
	fields := buf[:0]
	it := jsonx.WalkObject(raw)
	for it.Next() {
		key := it.Key()
		if len(fields) == maxMembers || fields.get(string(key)) != nil {
			return nil, false
		}
		fields = append(fields, jsonx.Member{Key: key, Value: it.Value()})
	}
	if !it.OK() {
		return nil, false
	}
	return fields, true
}
