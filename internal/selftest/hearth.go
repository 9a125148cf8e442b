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
	"github.com/hearth-dev/hearth/internal/jsontree"
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
	arrivals map[string]map[string]any
}

// protocolVersion is the MCP protocol the selftest speaks.
const protocolVersion = "2026-07-28"

// conversation is the selftest client's conversation.
const conversation = "hearth-selftest"

// callTimeout bounds one tool call.
const callTimeout = 60 * time.Second

// startHearth writes a config (policy ask, the run's fs root, loopback
// ports chosen by the system, no tunnel) and serves Hearth in-process.
func (r *run) startHearth(ctx context.Context) (string, error) {
	cfg := config.Default()
	cfg.Roots = []string{r.root}
	cfg.Policy.Mode = config.ModeAsk
	cfg.MCPAddr, cfg.PanelAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfgPath := config.Path(r.dataDir)
	if err := config.Write(cfgPath, cfg); err != nil {
		return "", fmt.Errorf("write the temporary Hearth's config: %w", err)
	}
	a, err := app.Open(context.WithoutCancel(ctx), app.Options{DataDir: r.dataDir, ConfigPath: cfgPath, Version: r.o.Version, Log: r.o.Log, UIProvider: r.o.uiProvider})
	if err != nil {
		return "", fmt.Errorf("open Hearth on the temporary data directory: %w", err)
	}
	if err := a.Listen(); err != nil {
		a.Close()
		return "", fmt.Errorf("listen: %w", err)
	}
	actx, cancel := context.WithCancel(context.Background())
	h := &hearth{app: a, cancel: cancel, done: make(chan error, 1), arrivals: map[string]map[string]any{}}
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
type result struct {
	env map[string]any
	raw []byte
}

func (r *result) state() string { s, _ := r.env["state"].(string); return s }
func (r *result) get(path string) any {
	return jsontree.Get(r.env, path)
}
func (r *result) str(path string) string { s, _ := r.get(path).(string); return s }
func (r *result) num(path string) float64 {
	n, _ := r.get(path).(float64)
	return n
}

// code is "state/error.code" of a refusal, "completed" otherwise.
func (r *result) code() string {
	if c := r.str("error.code"); c != "" {
		return r.state() + "/" + c
	}
	return r.state()
}

// brief is a short rendering for a FAIL line.
func (r *result) brief() string {
	if m := r.str("error.message"); m != "" {
		return r.code() + ": " + m
	}
	const max = 300
	if len(r.raw) > max {
		return string(r.raw[:max]) + "…"
	}
	return string(r.raw)
}

// call calls tool with args in the selftest's conversation and keeps the
// arrivals the response carried.
func (h *hearth) call(ctx context.Context, tool string, args map[string]any) (*result, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := h.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: mcp.Meta{"hearth/conversation": conversation}})
	if err != nil {
		return nil, fmt.Errorf("%s.%v: %w", tool, args["operation"], err)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	out := &result{raw: raw}
	if err := json.Unmarshal(raw, &out.env); err != nil || out.env == nil {
		return nil, fmt.Errorf("%s.%v: structuredContent is not an envelope: %.200s", tool, args["operation"], raw)
	}
	arr, _ := out.env["arrivals"].([]any)
	for _, a := range arr {
		id, _ := jsontree.Get(a, "future_id").(string)
		env, _ := jsontree.Get(a, "envelope").(map[string]any)
		if id != "" && env != nil {
			h.arrivals[id] = env
		}
	}
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
	return &result{env: env, raw: raw}, nil
}

// await returns the terminal envelope of future id once it arrived,
// blocking on task.wait in slices.
func (h *hearth) await(ctx context.Context, id string, within time.Duration) (map[string]any, error) {
	deadline := time.Now().Add(within)
	for {
		if env, ok := h.arrivals[id]; ok {
			return env, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no result for %s within %v", id, within)
		}
		r, err := h.call(ctx, "task", map[string]any{"operation": "wait", "id": id, "timeout_ms": 2000})
		if err != nil {
			return nil, err
		}
		if _, ok := h.arrivals[id]; ok {
			continue
		}
		if r.get("result.timed_out") == false {
			// Terminal: its arrival comes with the next response.
			if _, err := h.call(ctx, "machine", map[string]any{"operation": "host_info"}); err != nil {
				return nil, err
			}
		}
	}
}

// settle is r's envelope, or the terminal one of its future when r went
// pending for a reason other than a permit.
func (h *hearth) settle(ctx context.Context, r *result) (map[string]any, error) {
	if r.state() != "pending" || r.str("permit_id") != "" {
		return r.env, nil
	}
	id := r.str("future_id")
	if id == "" {
		return nil, fmt.Errorf("pending without a future_id: %s", r.brief())
	}
	return h.await(ctx, id, 60*time.Second)
}
