package app

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/hearth-dev/hearth/internal/peeruser"
)

// connOrigin is what Hearth learns once about an MCP connection: whether
// the tunnel-client it supervises made it. It lives in the connection's
// context (mcpConnContext), so a keep-alive connection is looked up once
// per tunnel-client process, not once per call.
type connOrigin struct {
	conn net.Conn

	mu sync.Mutex
	// pid is the tunnel-client process the answer is about; viaTunnel the
	// answer (valid only while pid is the child's).
	pid       int
	viaTunnel bool
}

type connOriginKey struct{}

// mcpConnContext is the MCP server's ConnContext: each connection's
// requests carry its connOrigin.
func mcpConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connOriginKey{}, &connOrigin{conn: c})
}

// noteChatGPTCall is the MCP server's OnOpenAISession: a call carrying
// _meta["openai/session"] counts as ChatGPT's first call only when its
// connection belongs to the tunnel-client Hearth runs. Any local program
// can put that key in a call; only the tunnel's calls come from the
// supervised child. Nothing is looked up once the first call is known.
func (a *App) noteChatGPTCall(ctx context.Context) {
	if !a.Tunnel.FirstChatGPTCall().IsZero() {
		return
	}
	if !a.viaTunnel(ctx) {
		return
	}
	a.Tunnel.NoteChatGPTCall(time.Now())
}

// viaTunnel reports whether the request of ctx came over a connection
// made by the running tunnel-client (its process id now, Status.PID).
func (a *App) viaTunnel(ctx context.Context) bool {
	o, _ := ctx.Value(connOriginKey{}).(*connOrigin)
	pid := a.Tunnel.Status().PID
	if o == nil || pid <= 0 {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pid == pid {
		return o.viaTunnel
	}
	ok, err := peeruser.ConnHeldBy(o.conn, pid)
	switch {
	case err != nil:
		// Not counted, and not looked up again for this connection.
		a.Log.Warn("secure mcp tunnel: find whether a call carrying openai/session came through the tunnel", "peer", o.conn.RemoteAddr().String(), "err", err)
	case !ok:
		a.Log.Info("secure mcp tunnel: a call carrying openai/session came from a local program, not through the tunnel; not counted as ChatGPT's", "peer", o.conn.RemoteAddr().String())
	}
	o.pid, o.viaTunnel = pid, ok && err == nil
	return o.viaTunnel
}
