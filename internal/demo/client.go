package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hearth-dev/hearth/internal/jsontree"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// protocolVersion is the MCP protocol the demo speaks (server/discover, no
// handshake).
const protocolVersion = "2026-07-28"

// callTimeout bounds one tool call; the longest a call blocks by design is
// a task.wait of awaitSlice.
const callTimeout = 30 * time.Second

// client is the demo's one MCP client (go-sdk) in one conversation. It
// keeps every arrival any response carried, so a step can wait for a
// future whose result was piggybacked on an earlier, unrelated call.
type client struct {
	mc           *mcp.Client
	session      *mcp.ClientSession
	conversation string
	arrivals     map[string]map[string]any // future or job id → terminal envelope
	calls        int
}

func newClient(version, conversation string) *client {
	return &client{
		mc:           mcp.NewClient(&mcp.Implementation{Name: "hearth-demo", Version: version}, nil),
		conversation: conversation,
		arrivals:     map[string]map[string]any{},
	}
}

// connect opens a session to url, replacing any previous one (after a
// restart Hearth listens on a new port).
func (c *client) connect(ctx context.Context, url string) error {
	c.close()
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	s, err := c.mc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return fmt.Errorf("connect to %s: %w", url, err)
	}
	c.session = s
	return nil
}

func (c *client) close() {
	if c.session != nil {
		c.session.Close()
		c.session = nil
	}
}

// result is one decoded tool result.
type result struct {
	isError bool
	env     map[string]any // structuredContent: the envelope
	raw     []byte
}

func (r *result) state() string { s, _ := r.env["state"].(string); return s }

func (r *result) get(path string) any { return jsontree.Get(r.env, path) }

func (r *result) str(path string) string { s, _ := r.get(path).(string); return s }

// brief is a short rendering of a result for error messages.
func (r *result) brief() string {
	const max = 400
	if len(r.raw) > max {
		return string(r.raw[:max]) + "…"
	}
	return string(r.raw)
}

// call calls tool with args, sending _meta["hearth/conversation"] and any
// extra _meta entries, and records the arrivals of the response.
func (c *client) call(ctx context.Context, tool string, args map[string]any, meta map[string]any) (*result, error) {
	m := mcp.Meta{"hearth/conversation": c.conversation}
	for k, v := range meta {
		m[k] = v
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	c.calls++
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: m})
	if err != nil {
		return nil, fmt.Errorf("%s.%v: %w", tool, args["operation"], err)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	out := &result{isError: res.IsError, raw: raw}
	if err := json.Unmarshal(raw, &out.env); err != nil || out.env == nil {
		return nil, fmt.Errorf("%s.%v: structuredContent is not an envelope: %.200s", tool, args["operation"], raw)
	}
	arr, _ := out.env["arrivals"].([]any)
	for _, a := range arr {
		id, _ := jsontree.Get(a, "future_id").(string)
		env, _ := jsontree.Get(a, "envelope").(map[string]any)
		if id != "" && env != nil {
			c.arrivals[id] = env
		}
	}
	return out, nil
}

// hostInfo is the cheapest call; it is how the demo collects arrivals.
func (c *client) hostInfo(ctx context.Context) (*result, error) {
	return c.call(ctx, "machine", map[string]any{"operation": "host_info"}, nil)
}

// awaitSlice is how long one task.wait blocks while awaiting a result.
const awaitSlice = 2 * time.Second

// await returns the terminal envelope of a future or job of this
// conversation once it has arrived in the mailbox. It blocks on task.wait
// (not polling) and lets the next call deliver the arrival.
func (c *client) await(ctx context.Context, id string, within time.Duration) (map[string]any, error) {
	deadline := time.Now().Add(within)
	for {
		if env, ok := c.arrivals[id]; ok {
			return env, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no result for %s within %v", id, within)
		}
		r, err := c.call(ctx, "task", map[string]any{"operation": "wait", "id": id, "timeout_ms": awaitSlice.Milliseconds()}, nil)
		if err != nil {
			return nil, err
		}
		if r.isError {
			return nil, fmt.Errorf("task.wait %s: %s", id, r.brief())
		}
		if _, ok := c.arrivals[id]; ok {
			continue
		}
		if r.get("result.timed_out") == false {
			// Terminal, or a job that just started: a terminal one's
			// arrival was committed with it and comes with the next
			// response; otherwise the loop waits again.
			if _, err := c.hostInfo(ctx); err != nil {
				return nil, err
			}
		}
	}
}

// settle returns r's envelope, or, when r went pending (slower than the
// inline budget), the terminal envelope that arrives for its future.
func (c *client) settle(ctx context.Context, r *result) (map[string]any, error) {
	if r.state() != "pending" {
		return r.env, nil
	}
	id := r.str("future_id")
	if id == "" {
		return nil, fmt.Errorf("pending without a future_id: %s", r.brief())
	}
	return c.await(ctx, id, 30*time.Second)
}
