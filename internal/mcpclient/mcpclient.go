// Package mcpclient is the client side that Hearth's own MCP callers share
// (the demo, the selftest, the test helpers): one tool call's result
// decoded into its envelope, the mailbox of arrivals that responses carry,
// and waiting for a future's arrival with task.wait.
package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/jsonx"
)

// Result is one decoded tool result.
type Result struct {
	IsError bool
	// Text is the result's text content, joined.
	Text string
	// Env is the structuredContent envelope (nil when there is none).
	Env map[string]any
	Raw json.RawMessage
}

// State is the envelope's state.
func (r *Result) State() string { return r.Str("state") }

// Get walks a dotted path ("result.stdout.text") in the envelope; numeric
// parts index arrays.
func (r *Result) Get(path string) any { return jsonx.GetPath(r.Env, path) }

// Str is Get for a string ("" when it is not one).
func (r *Result) Str(path string) string { s, _ := r.Get(path).(string); return s }

// Num is Get for a number (0 when it is not one).
func (r *Result) Num(path string) float64 { n, _ := r.Get(path).(float64); return n }

// Code is "state/error.code" of a refusal, the state otherwise.
func (r *Result) Code() string {
	if c := r.Str("error.code"); c != "" {
		return r.State() + "/" + c
	}
	return r.State()
}

// Brief is a short rendering for an error message: the refusal's code and
// message, or the start of the envelope.
func (r *Result) Brief() string {
	if m := r.Str("error.message"); m != "" {
		return r.Code() + ": " + m
	}
	const most = 400
	if len(r.Raw) > most {
		return string(r.Raw[:most]) + "…"
	}
	return string(r.Raw)
}

// Arrivals are the envelope's arrivals (future_id, seq, envelope).
func (r *Result) Arrivals() []map[string]any {
	var out []map[string]any
	arr, _ := r.Env["arrivals"].([]any)
	for _, a := range arr {
		if m, ok := a.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Decode decodes a tool result. A structuredContent that is not a JSON
// object is an error; an absent one leaves Env nil.
func Decode(res *mcp.CallToolResult) (*Result, error) {
	out := &Result{IsError: res.IsError}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out.Text += tc.Text
		}
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, fmt.Errorf("encode structuredContent: %w", err)
	}
	out.Raw = raw
	if err := json.Unmarshal(raw, &out.Env); err != nil {
		return nil, fmt.Errorf("structuredContent is not an object: %.200s", raw)
	}
	return out, nil
}

// Call calls tool with args and _meta and decodes its envelope; a result
// without one is an error. Errors name the tool and operation.
func Call(ctx context.Context, s *mcp.ClientSession, tool string, args map[string]any, meta mcp.Meta) (*Result, error) {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta})
	if err != nil {
		return nil, fmt.Errorf("%s.%v: %w", tool, args["operation"], err)
	}
	out, err := Decode(res)
	if err == nil && out.Env == nil {
		err = fmt.Errorf("structuredContent is not an envelope: %.200s", out.Raw)
	}
	if err != nil {
		return nil, fmt.Errorf("%s.%v: %w", tool, args["operation"], err)
	}
	return out, nil
}

// Mailbox keeps the terminal envelopes that responses carried, by future
// or job id, so that a caller can wait for a result that rode on an
// earlier, unrelated response.
type Mailbox map[string]map[string]any

// Keep records r's arrivals.
func (m Mailbox) Keep(r *Result) {
	for _, a := range r.Arrivals() {
		id, _ := a["future_id"].(string)
		env, _ := a["envelope"].(map[string]any)
		if id != "" && env != nil {
			m[id] = env
		}
	}
}

// CallFunc makes one tool call and keeps its arrivals in the mailbox.
type CallFunc func(ctx context.Context, tool string, args map[string]any) (*Result, error)

// Await returns the terminal envelope of future or job id once it is in
// m, within the given time. It blocks on task.wait in slices (never
// polls); when a wait says the call has ended, its arrival comes with the
// next response, which a host_info call fetches.
func Await(ctx context.Context, m Mailbox, call CallFunc, id string, within, slice time.Duration) (map[string]any, error) {
	deadline := time.Now().Add(within)
	for {
		if env, ok := m[id]; ok {
			return env, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no result for %s within %v", id, within)
		}
		r, err := call(ctx, "task", map[string]any{"operation": "wait", "id": id, "timeout_ms": slice.Milliseconds()})
		if err != nil {
			return nil, err
		}
		if r.IsError {
			return nil, fmt.Errorf("task.wait %s: %s", id, r.Brief())
		}
		if _, ok := m[id]; ok {
			continue
		}
		if r.Get("result.timed_out") == false {
			// Terminal, or a job that just started: a terminal one's
			// arrival was committed with it and comes with the next
			// response; otherwise the loop waits again.
			if _, err := call(ctx, "machine", map[string]any{"operation": "host_info"}); err != nil {
				return nil, err
			}
		}
	}
}
