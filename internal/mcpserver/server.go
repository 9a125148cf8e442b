// Package mcpserver is the go-sdk glue: one shared stateless *mcp.Server
// with JSON responses, the seven tool facades (thin maps from operation to
// primitive), conversation routing, and the hardened HTTP surface.
package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/dispatch"
	"github.com/hearth-dev/hearth/internal/ids"
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
	{Name: "fs", Intro: "Read, search and edit files under the configured roots: atomic writes, sha256 conflict checks, durable undo receipts."},
	{Name: "task", Intro: "Durable job queue and future inspection: submit jobs with dependencies and delays, wait, cancel, reconcile unknown outcomes."},
	{Name: "artifact", Intro: "Read stored artifacts (spilled output, large results) by id.", ReadOnly: true},
	{Name: "ui", Intro: "Windows UI Automation: snapshot, query and act on windows semantically."},
	{Name: "recipe", Intro: "Named, parameterised sequences of primitive steps, run sequentially and traced."},
	{Name: "run", Intro: "Durable runs: checkpoints, event log, typed scatter of primitive calls with $future references, continuations."},
}

// Server holds the MCP server and its dependencies.
type Server struct {
	Registry   *primitive.Registry
	Dispatcher *dispatch.Dispatcher
	Log        *slog.Logger
	// Disclosure returns a sentence appended to every tool description:
	// policy mode, e-stop state, unavailable capabilities. It is called on
	// every tools/list, so the descriptions follow the live state (an
	// operator's policy change, or an e-stop latched or reset, even by
	// another process on the same database).
	Disclosure func(ctx context.Context) string
	Version    string

	mcp *mcp.Server
	sdk http.Handler
}

// Build creates the SDK server and registers the tools.
func (s *Server) Build() error {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "hearth", Title: "Hearth", Version: s.Version}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		Instructions: "Hearth runs work on the user's own PC. Every tool takes {operation, ...fields}; results carry state and arrivals of earlier detached work. Send _meta[\"hearth/conversation\"] on every call to receive later arrivals.",
	})
	s.mcp.AddReceivingMiddleware(undeclared, s.disclose)
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

// undeclared answers method-not-found for capabilities Hearth does not
// declare, so that a client probing prompts or resources does not take an
// empty list for support.
func undeclared(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "prompts/") || strings.HasPrefix(method, "resources/") ||
			method == "completion/complete" || method == "logging/setLevel" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method + " (Hearth offers tools only)"}
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
			c.Description += "\n" + d
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
func Route(meta map[string]any) string {
	for _, k := range []string{"openai/session", "hearth/conversation"} {
		v, ok := meta[k]
		if !ok || v == nil {
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
		sum := sha256.Sum256([]byte(k + "\x00" + s))
		return "r:" + hex.EncodeToString(sum[:16])
	}
	return dispatch.AnonymousPrefix + ids.New("req")
}

// CommandID returns a client-supplied _meta["hearth/command_id"], if any.
func CommandID(meta map[string]any) string {
	if v, ok := meta["hearth/command_id"].(string); ok {
		return v
	}
	return ""
}

func (s *Server) handle(tool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		meta := map[string]any(req.Params.Meta)
		route := Route(meta)
		var env *dispatch.Envelope
		spec, input, detach, err := s.Registry.Decode(tool, req.Params.Arguments)
		if err == nil && CommandID(meta) != "" && strings.HasPrefix(route, dispatch.AnonymousPrefix) {
			err = fmt.Errorf(`_meta["hearth/command_id"]: a command id is remembered per conversation; send _meta["hearth/conversation"] with it`)
		}
		if err != nil {
			env = dispatch.ErrorEnvelope(tool, primitive.Failed("invalid_input", "%s", err.Error()))
		} else {
			env = s.Dispatcher.Call(ctx, dispatch.Request{Route: route, Spec: spec, Input: input, Detach: detach, CommandID: CommandID(meta)})
		}
		arr, derr := s.Dispatcher.Deliver(ctx, route, infoFrom(ctx).FP)
		if derr != nil {
			s.Log.Error("deliver arrivals", "err", derr)
			arr = []dispatch.Arrival{}
		}
		env.Arrivals = arr
		return render(env)
	}
}

// maxText bounds the JSON copy in the text content; structuredContent
// always has everything.
const maxText = 8 << 10

func render(env *dispatch.Envelope) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
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
	text := summary
	if len(b) <= maxText {
		text += "\n" + string(b)
	} else {
		text += "\n(full result in structuredContent)"
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: json.RawMessage(b),
		IsError:           env.IsError(),
	}, nil
}
