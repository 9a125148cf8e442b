package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/mcpclient"
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
	arrivals     mcpclient.Mailbox
	calls        int
}

func newClient(version, conversation string) *client {
	return &client{
		mc:           mcp.NewClient(&mcp.Implementation{Name: "hearth-demo", Version: version}, nil),
		conversation: conversation,
		arrivals:     mcpclient.Mailbox{},
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
type result = mcpclient.Result

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
	out, err := mcpclient.Call(ctx, c.session, tool, args, m)
	if err != nil {
		return nil, err
	}
	c.arrivals.Keep(out)
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
	return mcpclient.Await(ctx, c.arrivals, func(ctx context.Context, tool string, args map[string]any) (*result, error) {
		return c.call(ctx, tool, args, nil)
	}, id, within, awaitSlice)
}

// settle returns r's envelope, or, when r went pending (slower than the
// inline budget), the terminal envelope that arrives for its future.
func (c *client) settle(ctx context.Context, r *result) (map[string]any, error) {
	if r.State() != "pending" {
		return r.Env, nil
	}
	id := r.Str("future_id")
	if id == "" {
		return nil, fmt.Errorf("pending without a future_id: %s", r.Brief())
	}
	return c.await(ctx, id, 30*time.Second)
}
