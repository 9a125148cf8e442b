// Package mcpserver is the go-sdk glue: one shared stateless *mcp.Server
// with JSON responses, the seven tool facades (thin maps from operation to
// primitive), conversation routing, and the hardened HTTP surface.
package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/evidence"
	"github.com/hearth-dev/hearth/internal/jsonx"
	"github.com/hearth-dev/hearth/internal/primitive"
)

// ToolInfo is the facade-level description of one tool.
type ToolInfo struct {
	Name  string
	Intro string
	// ReadOnly tools carry readOnlyHint and idempotentHint.
	ReadOnly bool
}

// Tools lists the seven tools in their advertised order (a fresh copy:
// the list a server serves cannot be changed by anyone else). Only tools
// with at least one registered primitive are served.
func Tools() []ToolInfo { return append([]ToolInfo(nil), tools[:]...) }

var tools = [...]ToolInfo{
	{Name: "machine", Intro: "Run programs on this PC (argv, never a shell), inspect the host and processes. Output beyond max_output_bytes returns a preview plus an artifact id."},
	{Name: "fs", Intro: "Read, search and edit files and documents under the configured roots: atomic writes, sha256 conflict checks, undo receipts."},
	{Name: "task", Intro: "Durable job queue and future inspection: submit jobs with dependencies and delays, wait, cancel, reconcile unknown outcomes."},
	{Name: "artifact", Intro: "Read stored artifacts (spilled output, large results) by id.", ReadOnly: true},
	{Name: "ui", Intro: "Windows UI Automation: snapshot, query and act on windows semantically; screenshots and the text clipboard (also on Linux/X11)."},
	{Name: "recipe", Intro: "Named, parameterised sequences of primitive steps, run sequentially and traced."},
	{Name: "run", Intro: "Durable runs: checkpoints, event log, typed scatter of primitive calls with $future references, continuations."},
}

// Server holds the MCP server and its dependencies.
type Server struct {
	Registry   *primitive.Registry
	Dispatcher *dispatch.Dispatcher
	Log        *slog.Logger
	// Disclosure returns what says, for a tool, the sentence appended to
	// its description: policy mode and what it does with the tool's
	// operations, e-stop state, unavailable capabilities. It is called
	// once on every tools/list, so the descriptions follow the live state
	// (an operator's policy change, or an e-stop latched or reset, even
	// by another process on the same database).
	Disclosure func(ctx context.Context) func(tool string) string
	Version    string
	// OnOpenAISession, when set, is called for every tool call that
	// carries _meta["openai/session"], with the call's context (the HTTP
	// request's, so what http.Server.ConnContext put there reaches it).
	// Any local program can send that key: the callee decides whether the
	// call really came through the tunnel (Setup's "ChatGPT reached
	// Hearth" counts only those).
	OnOpenAISession func(ctx context.Context)
	// Probes, when set, hears of every call of a conversation and gives
	// an early pending answer of a conversation routed by
	// _meta["openai/session"] its route_probe (internal/wake).
	Probes RouteProber
	// Evidence serves the conversation's own evidence as resources
	// (resources.go). Required.
	Evidence *evidence.Service

	mcp *mcp.Server
	sdk http.Handler
	// fastCalls counts the requests the fast path answered (fastpath.go).
	fastCalls atomic.Int64
}

// RouteProber is the wake binder's side of the facade: Called is told the
// route of every call, and RouteProbe gives a pending answer its probe
// nonce (ok false: none, for example when the conversation is bound).
type RouteProber interface {
	Called(route string)
	RouteProbe(route string) (nonce string, expires time.Time, ok bool)
}

// RouteProbe is the route_probe of an early pending answer: a nonce the
// binder looks for in the page of Hearth's ChatGPT window, to learn which
// tab shows this conversation.
type RouteProbe struct {
	Nonce     string    `json:"nonce"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Build creates the SDK server and registers the tools.
func (s *Server) Build() error {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	if s.Evidence == nil {
		return errors.New("mcp server: no evidence service for resources")
	}
	s.mcp = mcp.NewServer(s.implementation(), &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}},
		Instructions: "Hearth runs work on the user's own PC. Every tool takes {operation, ...fields}; results carry state and arrivals of earlier detached work. Send _meta[\"hearth/conversation\"] on every call to receive later arrivals. A call that finishes before its answer is written is answered completed (with its future_id), so a pending answer never carries its own result in arrivals. An early pending answer may carry route_probe {nonce, expires_at}: repeat the nonce once, verbatim, in your reply, so that Hearth's ChatGPT window can find this conversation and bring you back when the work is done. This conversation's own evidence (its ledger entries with inclusion proofs, receipts, permits, artifacts) is in resources/list and resources/read, with the same _meta.",
	})
	s.mcp.AddReceivingMiddleware(undeclared, s.disclose, s.resourceList)
	s.addResources()
	for _, t := range tools {
		if len(s.Registry.Operations(t.Name)) == 0 {
			continue
		}
		desc := s.Registry.ToolDescription(t.Name, t.Intro)
		schema, err := json.Marshal(s.Registry.ToolSchema(t.Name))
		if err != nil {
			return fmt.Errorf("tool %s schema: %w", t.Name, err)
		}
		tool := &mcp.Tool{Name: t.Name, Description: desc, InputSchema: json.RawMessage(schema)}
		if t.ReadOnly {
			tool.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
		}
		s.mcp.AddTool(tool, s.handle(t.Name))
	}
	s.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              s.Log,
		MaxRequestBodyBytes: MaxBodyBytes,
	})
	return nil
}

// implementation is the server's name and version, as initialize and
// every 2026-07-28 result's _meta give them.
func (s *Server) implementation() *mcp.Implementation {
	return &mcp.Implementation{Name: "hearth", Title: "Hearth", Version: s.Version}
}

// undeclared answers method-not-found for capabilities Hearth does not
// declare, so that a client probing prompts or resource subscriptions does
// not take an empty list for support.
func undeclared(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "prompts/") || method == "resources/subscribe" || method == "resources/unsubscribe" ||
			method == "completion/complete" || method == "logging/setLevel" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method + " (Hearth offers tools, and resources to list and read)"}
		}
		return next(ctx, method, req)
	}
}

// disclose appends the live Disclosure to every tool description of a
// tools/list answer. The registered tools are shared by every request and
// stay untouched: the answer gets copies.
func (s *Server) disclose(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		list, ok := res.(*mcp.ListToolsResult)
		if err != nil || !ok || s.Disclosure == nil {
			return res, err
		}
		d := s.Disclosure(ctx)
		tools := make([]*mcp.Tool, len(list.Tools))
		for i, t := range list.Tools {
			c := *t
			c.Description += "\n" + d(t.Name)
			tools[i] = &c
		}
		list.Tools = tools
		return list, nil
	}
}

// Route derives the conversation route from request metadata: SHA-256 of
// _meta["openai/session"], else of _meta["hearth/conversation"], else a
// fresh request-scoped anonymous route. Raw identifiers never leave this
// function.
func Route(meta map[string]any) string { return metaOf(meta).route() }

// callMeta is what Hearth reads of a tool call's _meta: each value as the
// SDK decodes it (a string, a number, an object...), nil when absent or
// null.
type callMeta struct {
	session, conversation, commandID any
}

// metaOf is the callMeta of a decoded _meta.
func metaOf(meta map[string]any) callMeta {
	return callMeta{session: meta[metaSession], conversation: meta[metaConversation], commandID: meta[metaCommandID]}
}

// route is Route of the _meta m was read from.
func (m callMeta) route() string {
	for _, kv := range [...]struct {
		k string
		v any
	}{{metaSession, m.session}, {metaConversation, m.conversation}} {
		k, v := kv.k, kv.v
		if v == nil {
			continue
		}
		s, isString := v.(string)
		if !isString {
			b, _ := json.Marshal(v)
			s = string(b)
		}
		if s == "" {
			continue
		}
		// Hashed and hex-encoded on the stack for an ordinary id.
		var in [128]byte
		sum := sha256.Sum256(append(append(append(in[:0], k...), 0), s...))
		var out [2 + 32]byte
		copy(out[:], "r:")
		hex.Encode(out[2:], sum[:16])
		return string(out[:])
	}
	return dispatch.AnonymousPrefix + primitive.NewID("req")
}

// The _meta keys Hearth reads.
const (
	metaSession      = "openai/session"
	metaConversation = "hearth/conversation"
	metaCommandID    = "hearth/command_id"
)

// commandIDText is a client-supplied _meta["hearth/command_id"], if any.
func (m callMeta) commandIDText() string {
	v, _ := m.commandID.(string)
	return v
}

// handle is the SDK's tool handler for tool: the call is the wireRequest
// fingerprint read (its fingerprint and UTF-8 check) with the tool,
// arguments and _meta of the SDK's own decode, which it answers.
func (s *Server) handle(tool string) mcp.ToolHandler {
	return func(ctx context.Context, sdkReq *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		wire := wireFrom(ctx)
		wire.Tool, wire.Arguments, wire.Meta = tool, sdkReq.Params.Arguments, metaOf(sdkReq.Params.Meta)
		return render(s.answer(ctx, &wire))
	}
}

// answer runs one tool call (both the SDK's handler and the fast path
// call it) and returns its envelope, with the arrivals it carries, and
// the route probe of its answer. The call's arguments are valid JSON or
// empty: they are a value of a body fingerprint has checked whole. It
// decodes the call into the engine's dispatch.Request.
func (s *Server) answer(ctx context.Context, wire *wireRequest) (*dispatch.Envelope, *RouteProbe) {
	meta := wire.Meta
	if meta.session != nil && s.OnOpenAISession != nil {
		s.OnOpenAISession(ctx)
	}
	req := dispatch.Request{Route: meta.route(), CommandID: meta.commandIDText()}
	var err error
	req.Spec, req.Input, req.Detach, err = s.Registry.DecodeValid(wire.Tool, wire.Arguments)
	if bad := wire.BadUTF8; bad != "" {
		err = badUTF8(wire.Tool, req.Spec, bad)
	}
	if err == nil && req.CommandID != "" && strings.HasPrefix(req.Route, dispatch.AnonymousPrefix) {
		err = fmt.Errorf(`_meta["hearth/command_id"]: a command id is remembered per conversation; send _meta["hearth/conversation"] with it`)
	}
	deliver := func() []dispatch.Arrival {
		arr, derr := s.Dispatcher.Deliver(ctx, req.Route, wire.FP)
		if derr != nil {
			s.Log.Error("deliver arrivals", "err", derr)
			arr = []dispatch.Arrival{}
		}
		return arr
	}
	// A pending answer never carries its own result: a detached call's
	// arrivals are taken before it starts (its result arrives on a
	// later call), and a call that went pending at the inline budget
	// but finished before the delivery is answered completed inline.
	var env *dispatch.Envelope
	var arr []dispatch.Arrival
	if err != nil {
		env = dispatch.ErrorEnvelope(wire.Tool, primitive.Failed("invalid_input", "%s", err.Error()))
		arr = deliver()
	} else if req.Detach {
		arr = deliver()
		env = s.Dispatcher.Call(ctx, req)
	} else {
		env = s.Dispatcher.Call(ctx, req)
		arr = deliver()
		env, arr = settleOwn(env, arr)
	}
	env.Arrivals = arr
	return env, s.probe(meta, req.Route, env)
}

// settleOwn answers a pending call whose own result is already among the
// arrivals of this response (it finished between the inline budget and
// the delivery) with that result, as completed inline: a client never has
// to find its answer in arrivals of the same response. The arrival is taken out of the list; it stays offered and is
// acknowledged like the rest of the batch.
func settleOwn(env *dispatch.Envelope, arr []dispatch.Arrival) (*dispatch.Envelope, []dispatch.Arrival) {
	if env.State != primitive.StatePending || env.FutureID == "" {
		return env, arr
	}
	for i, a := range arr {
		if a.FutureID != env.FutureID {
			continue
		}
		var own dispatch.Envelope
		if json.Unmarshal(a.Envelope, &own) != nil || own.State == primitive.StatePending {
			return env, arr
		}
		if own.FutureID == "" {
			own.FutureID = env.FutureID
		}
		if own.CommandID == "" {
			own.CommandID = env.CommandID
		}
		rest := append(append([]dispatch.Arrival{}, arr[:i]...), arr[i+1:]...)
		return &own, rest
	}
	return env, arr
}

// badUTF8 is the refusal of a tool call whose arguments hold a string that
// is not valid UTF-8: the decoder would have replaced it with U+FFFD and
// Hearth would have acted on other text than the client sent.
func badUTF8(tool string, spec *primitive.Spec, field string) error {
	op := ""
	if spec != nil {
		op = spec.Operation
	}
	return &primitive.ValidationError{Tool: tool, Operation: op, Field: field,
		Msg: `not valid UTF-8 (invalid bytes or a lone surrogate escape such as \ud800); send text as UTF-8, and binary file content with encoding "base64"`}
}

// probe tells the wake binder of the call and returns the route probe of
// a pending answer in a conversation routed by _meta["openai/session"].
func (s *Server) probe(meta callMeta, route string, env *dispatch.Envelope) *RouteProbe {
	if s.Probes == nil || strings.HasPrefix(route, dispatch.AnonymousPrefix) {
		return nil
	}
	s.Probes.Called(route)
	if env.State != primitive.StatePending {
		return nil
	}
	if v := meta.session; v == nil || v == "" {
		return nil
	}
	nonce, exp, ok := s.Probes.RouteProbe(route)
	if !ok {
		return nil
	}
	return &RouteProbe{Nonce: nonce, ExpiresAt: exp.UTC()}
}

// maxText bounds the JSON copy in the text content; structuredContent
// always has everything.
const maxText = 8 << 10

// probeText is the pending text's sentence about a route probe: the
// binder reads it in the page (ChatGPT shows a tool's output), and the
// model repeats it once because ChatGPT does not always show it.
const probeText = "Route probe %s (expires %s): repeat this token once, verbatim, in your reply, so that Hearth's ChatGPT window can find this conversation and bring you back when the work is done."

func render(env *dispatch.Envelope, probe *RouteProbe) (*mcp.CallToolResult, error) {
	b, err := encodeEnvelope(env, probe)
	if err != nil {
		return nil, err
	}
	text := summaryText(env, probe)
	if len(b) <= maxText {
		text += "\n" + string(b)
	} else {
		text += "\n" + fullInStructured
	}
	content := []mcp.Content{&mcp.TextContent{Text: text}}
	if mime, data := resultImage(env); data != nil {
		content = append(content, &mcp.ImageContent{MIMEType: mime, Data: data})
	}
	return &mcp.CallToolResult{
		Content:           content,
		StructuredContent: json.RawMessage(b),
		IsError:           env.IsError(),
	}, nil
}

// resultImage is the image a result carries for the caller to see
// (primitive.ImageResult), sent as an image content item after the text;
// nil data when it has none. Only the answer of the call that made the
// image has it: the envelope's JSON never holds the bytes.
func resultImage(env *dispatch.Envelope) (mime string, data []byte) {
	if im, ok := env.Result.(primitive.ImageResult); ok && !nilPointer(im) {
		if mime, data = im.Image(); len(data) > 0 {
			return mime, data
		}
	}
	return "", nil
}

// fullInStructured ends the text of a result too large to copy there.
const fullInStructured = "(full result in structuredContent)"

// encodeEnvelope is a result's structuredContent: the envelope and the
// route probe.
func encodeEnvelope(env *dispatch.Envelope, probe *RouteProbe) ([]byte, error) {
	if b, ok := appendEnvelope(make([]byte, 0, 512), env, probe); ok {
		return b, nil
	}
	wire := struct {
		*dispatch.Envelope
		RouteProbe *RouteProbe `json:"route_probe,omitempty"`
	}{env, probe}
	b, err := json.Marshal(wire)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return b, nil
}

// summaryText is the first line(s) of a result's text content: what
// happened, and a route probe's sentence.
func summaryText(env *dispatch.Envelope, probe *RouteProbe) string {
	summary := env.State
	if env.Primitive != "" {
		summary = env.Primitive + ": " + env.State
	}
	if env.FutureID != "" {
		summary += " (future " + env.FutureID + ")"
	}
	if env.Error != nil {
		summary += " — " + env.Error.Message
	}
	if len(env.Arrivals) > 0 {
		summary += fmt.Sprintf(" [%d arrival(s)]", len(env.Arrivals))
	}
	if probe != nil {
		summary += "\n" + fmt.Sprintf(probeText, probe.Nonce, probe.ExpiresAt.Format(time.RFC3339))
	}
	return summary
}

// appendEnvelope appends what encodeEnvelope's json.Marshal gives, member
// by member in the envelope's order: its strings and a result that is a
// jsonx.Appender without reflection, the rest (an error, an artifact,
// arrivals, the probe, any other result) each marshalled on its own,
// which encodes them as they are encoded inside the envelope. ok is false
// when a member cannot be encoded (the caller's json.Marshal then gives the
// error); TestAppendEnvelopeMatchesMarshal holds it to Marshal's output.
func appendEnvelope(b []byte, env *dispatch.Envelope, probe *RouteProbe) ([]byte, bool) {
	marshal := func(key string, v any) bool {
		m, err := json.Marshal(v)
		b = append(append(b, key...), m...)
		return err == nil
	}
	b = append(b, `{"state":`...)
	b = jsonx.AppendString(b, env.State)
	for _, m := range [...]struct{ key, v string }{{`,"primitive":`, env.Primitive}, {`,"future_id":`, env.FutureID},
		{`,"permit_id":`, env.PermitID}, {`,"command_id":`, env.CommandID}} {
		if m.v != "" {
			b = jsonx.AppendString(append(b, m.key...), m.v)
		}
	}
	if env.Replayed {
		b = append(b, `,"replayed":true`...)
	}
	if env.Result != nil {
		if a, ok := env.Result.(jsonx.Appender); ok && !nilPointer(a) {
			if b, ok = a.AppendJSON(append(b, `,"result":`...)); !ok {
				return b, false
			}
		} else if !marshal(`,"result":`, env.Result) {
			return b, false
		}
	}
	if env.Error != nil && !marshal(`,"error":`, env.Error) {
		return b, false
	}
	if env.Artifact != nil && !marshal(`,"artifact":`, env.Artifact) {
		return b, false
	}
	switch {
	case env.Arrivals == nil:
	case len(env.Arrivals) == 0:
		b = append(b, `,"arrivals":[]`...)
	case !marshal(`,"arrivals":`, env.Arrivals):
		return b, false
	}
	if probe != nil && !marshal(`,"route_probe":`, probe) {
		return b, false
	}
	return append(b, '}'), true
}

// nilPointer: a typed nil, which Marshal writes as null and whose method
// would not run.
func nilPointer(v any) bool {
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}
