package selftest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/mcpclient"
)

// hearth is the run's in-process Hearth on its temporary data directory,
// serving MCP on a loopback port, and the one MCP client (go-sdk) the
// checks call it with.
type hearth struct {
	app     *app.App
	cancel  context.CancelFunc
	done    chan error
	session *mcp.ClientSession
	// arrivals are the terminal envelopes responses carried, by future id.
	arrivals mcpclient.Mailbox
}

// protocolVersion is the MCP protocol the selftest speaks.
const protocolVersion = "2026-07-28"

// conversation is the selftest client's conversation.
const conversation = "hearth-selftest"

// callTimeout bounds one tool call.
const callTimeout = 60 * time.Second

// startHearth writes a config (policy ask, the run's fs root, loopback
// ports chosen by the system, no tunnel) and serves Hearth in-process,
// without the daily backup.
func (r *run) startHearth(ctx context.Context) (string, error) {
	cfg := config.Default()
	cfg.Roots = []string{r.root}
	cfg.Policy.Mode = config.ModeAsk
	cfg.MCPAddr, cfg.PanelAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfgPath := config.Path(r.dataDir)
	if err := config.Write(cfgPath, cfg); err != nil {
		return "", fmt.Errorf("write the temporary Hearth's config: %w", err)
	}
	// No daily backup: the data directory is removed when the run ends,
	// and a backup still being made then (a slow or loaded PC, Wine)
	// would hold a file in it open and fail the clean-up.
	a, err := app.Open(context.WithoutCancel(ctx), app.Options{DataDir: r.dataDir, ConfigPath: cfgPath, Version: r.o.Version, Log: r.o.Log, UIProvider: r.o.uiProvider, BackupEvery: -1})
	if err != nil {
		return "", fmt.Errorf("open Hearth on the temporary data directory: %w", err)
	}
	if err := a.Listen(); err != nil {
		a.Close()
		return "", fmt.Errorf("listen: %w", err)
	}
	actx, cancel := context.WithCancel(context.Background())
	h := &hearth{app: a, cancel: cancel, done: make(chan error, 1), arrivals: mcpclient.Mailbox{}}
	go func() { h.done <- a.Serve(actx) }()
	r.onFinish("the temporary Hearth", h.stop)
	select {
	case <-a.Ready():
	case err := <-h.done:
		return "", fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		return "", ctx.Err()
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "hearth-selftest", Version: r.o.Version}, nil)
	cctx, ccancel := context.WithTimeout(ctx, callTimeout)
	defer ccancel()
	s, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: a.MCPURL(), DisableStandaloneSSE: true, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		return "", fmt.Errorf("connect an MCP client to %s: %w", a.MCPURL(), err)
	}
	h.session = s
	r.hearth = h
	tools, err := s.ListTools(cctx, nil)
	if err != nil {
		return "", fmt.Errorf("tools/list: %w", err)
	}
	return fmt.Sprintf("Hearth serves MCP at %s on the temporary data directory (%d tools, policy ask)", a.MCPURL(), len(tools.Tools)), nil
}

// stop closes the client and shuts Hearth down in its own order.
func (h *hearth) stop() error {
	if h.session != nil {
		h.session.Close()
	}
	h.cancel()
	var err error
	select {
	case err = <-h.done:
	case <-time.After(60 * time.Second):
		err = errors.New("serve did not return within 60 s of cancellation")
	}
	return errors.Join(err, h.app.Close())
}

// result is one tool call's envelope (structuredContent).
type result = mcpclient.Result

// call calls tool with args in the selftest's conversation and keeps the
// arrivals the response carried.
func (h *hearth) call(ctx context.Context, tool string, args map[string]any) (*result, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	out, err := mcpclient.Call(ctx, h.session, tool, args, mcp.Meta{"hearth/conversation": conversation})
	if err != nil {
		return nil, err
	}
	h.arrivals.Keep(out)
	return out, nil
}

// callSettled is call, but a call that outlasted the inline budget (a slow
// PC, or Wine) is waited for: it answers what its future ended with. A
// call waiting for a permit is answered as it is.
func (h *hearth) callSettled(ctx context.Context, tool string, args map[string]any) (*result, error) {
	res, err := h.call(ctx, tool, args)
	if err != nil {
		return nil, err
	}
	env, err := h.settle(ctx, res)
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(env)
	return &result{Env: env, Raw: raw}, nil
}

// await returns the terminal envelope of future id once it arrived,
// blocking on task.wait in slices.
func (h *hearth) await(ctx context.Context, id string, within time.Duration) (map[string]any, error) {
	return mcpclient.Await(ctx, h.arrivals, h.call, id, within, 2*time.Second)
}

// settle is r's envelope, or the terminal one of its future when r went
// pending for a reason other than a permit.
func (h *hearth) settle(ctx context.Context, r *result) (map[string]any, error) {
	if r.State() != "pending" || r.Str("permit_id") != "" {
		return r.Env, nil
	}
	id := r.Str("future_id")
	if id == "" {
		return nil, fmt.Errorf("pending without a future_id: %s", r.Brief())
	}
	return h.await(ctx, id, 60*time.Second)
}
