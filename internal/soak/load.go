package soak

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// outage tracks when the server is down (killed, restarting), so that a
// transport error of a call begun before it came back is expected, not
// counted.
type outage struct {
	mu      sync.Mutex
	down    bool
	upSince time.Time
}

func (o *outage) set(down bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.down = down
	if !down {
		o.upSince = time.Now()
	}
}

// excused reports whether a call begun at start may fail for the outage.
func (o *outage) excused(start time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.down || start.Before(o.upSince.Add(time.Second))
}

func (o *outage) isDown() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.down
}

// loadStats are the load's counters, shared by the clients.
type loadStats struct {
	calls, errors, excused, pending atomic.Int64
	reconciled                      atomic.Int64
	tracked, arrived                atomic.Int64
	reads, torn                     atomic.Int64
	mu                              sync.Mutex
	firstErrors, notes              []string
}

func (s *loadStats) note(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.notes) < 10 {
		s.notes = append(s.notes, fmt.Sprintf(format, a...))
	}
}

func (s *loadStats) fail(format string, a ...any) {
	s.errors.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.firstErrors) < 10 {
		s.firstErrors = append(s.firstErrors, fmt.Sprintf(format, a...))
	}
}

// client is one soak client: its own conversation, its own file, the
// futures and jobs it was told about and has not seen arrive yet.
type client struct {
	id      int
	url     string
	file    string
	stats   *loadStats
	out     *outage
	http    *http.Client
	session *mcp.ClientSession
	waiting map[string]bool
	// early holds arrivals seen before their id was tracked.
	early map[string]bool
	// known holds every id tracked.
	known  map[string]bool
	seen   map[string]int
	maxSeq int64
	n      int
}

func (c *client) connect(ctx context.Context) error {
	if c.session != nil {
		c.session.Close()
		c.session = nil
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "hearth-soak", Version: "1"}, nil)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := cl.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: c.url, HTTPClient: c.http, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		return err
	}
	c.session = s
	return nil
}

// call makes one tool call and returns its envelope; ok is false when the
// call failed at the transport (counted, or excused during the outage).
func (c *client) call(ctx context.Context, tool string, args map[string]any) (map[string]any, bool) {
	start := time.Now()
	c.stats.calls.Add(1)
	if c.session == nil {
		if err := c.connect(ctx); err != nil {
			c.transportError(ctx, start, err)
			return nil, false
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	res, err := c.session.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args,
		Meta: mcp.Meta{"hearth/conversation": fmt.Sprintf("soak-%d", c.id)}})
	if err != nil {
		c.transportError(ctx, start, err)
		c.session.Close()
		c.session = nil
		return nil, false
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var env map[string]any
	if err := json.Unmarshal(raw, &env); err != nil {
		c.stats.fail("client %d: %s: structuredContent is not an object: %s", c.id, tool, raw)
		return nil, false
	}
	c.take(env)
	return env, true
}

func (c *client) transportError(ctx context.Context, start time.Time, err error) {
	if ctx.Err() != nil {
		return // the run is ending
	}
	if c.out.excused(start) {
		c.stats.excused.Add(1)
		return
	}
	c.stats.fail("client %d: transport: %v", c.id, err)
}

// take marks the arrivals of a response as arrived.
func (c *client) take(env map[string]any) {
	arr, _ := env["arrivals"].([]any)
	for _, a := range arr {
		m, _ := a.(map[string]any)
		id, _ := m["future_id"].(string)
		c.seen[id]++
		if seq, _ := m["seq"].(float64); int64(seq) <= c.maxSeq && c.seen[id] == 1 {
			c.stats.note("client %d: arrival %s seq %d after seq %d was delivered", c.id, id, int64(seq), c.maxSeq)
		} else if int64(seq) > c.maxSeq {
			c.maxSeq = int64(seq)
		}
		if c.waiting[id] {
			delete(c.waiting, id)
			c.stats.arrived.Add(1)
		} else {
			// A job's arrival can ride on the very response that
			// submitted it (the submit is answered after the delivery).
			c.early[id] = true
		}
	}
}

func (c *client) track(id string) {
	if id == "" || c.known[id] {
		return
	}
	c.known[id] = true
	c.stats.tracked.Add(1)
	if c.early[id] {
		delete(c.early, id)
		c.stats.arrived.Add(1)
		return
	}
	c.waiting[id] = true
}

// content is a version of the client's file that says whether it is
// whole: its last line is the SHA-256 of everything before it.
func content(client, n int) string {
	body := fmt.Sprintf("client %d version %d\n%s\n", client, n, strings.Repeat(fmt.Sprintf("%08d", n), 64+rand.IntN(1024)))
	sum := sha256.Sum256([]byte(body))
	return body + "sha256:" + hex.EncodeToString(sum[:]) + "\n"
}

// whole reports whether data is a whole version (or the file is absent).
func whole(data string) bool {
	i := strings.LastIndex(strings.TrimSuffix(data, "\n"), "\n")
	if i < 0 {
		return false
	}
	body, tail := data[:i+1], strings.TrimSpace(data[i+1:])
	sum := sha256.Sum256([]byte(body))
	return tail == "sha256:"+hex.EncodeToString(sum[:])
}

// step runs the client's next operation of the mix.
func (c *client) step(ctx context.Context) {
	c.n++
	switch c.n % 6 {
	case 0:
		c.expect(c.call(ctx, "machine", map[string]any{"operation": "host_info"}))
	case 1:
		env, ok := c.call(ctx, "machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"soak", fmt.Sprint(c.n)}})
		c.expect(env, ok)
	case 2:
		c.expect(c.call(ctx, "fs", map[string]any{"operation": "write", "path": c.file, "data": content(c.id, c.n)}))
	case 3:
		env, ok := c.call(ctx, "fs", map[string]any{"operation": "read", "path": c.file})
		if !ok {
			return
		}
		if env["state"] == "failed" {
			if code, _ := get(env, "error", "code").(string); code == "not_found" {
				return
			}
		}
		c.expect(env, ok)
		if text, _ := get(env, "result", "data").(string); text != "" {
			c.stats.reads.Add(1)
			if !whole(text) {
				c.stats.torn.Add(1)
				c.stats.fail("client %d: torn file read: %.80q", c.id, text)
			}
		}
	case 4:
		env, ok := c.call(ctx, "machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"detached"}, "detach": true})
		if ok && c.expect(env, ok) {
			id, _ := env["future_id"].(string)
			c.track(id)
		}
	case 5:
		env, ok := c.call(ctx, "task", map[string]any{"operation": "submit", "job": map[string]any{"command": "echo", "args": []string{"job"}}})
		if ok && c.expect(env, ok) {
			id, _ := get(env, "result", "id").(string)
			if id == "" {
				if jobs, _ := get(env, "result", "jobs").([]any); len(jobs) == 1 {
					id, _ = get(jobs[0].(map[string]any), "id").(string)
				}
			}
			if id == "" {
				c.stats.fail("client %d: task.submit answered no job id: %v", c.id, env)
			}
			c.track(id)
		}
	}
}

// expect counts an answer that is not a success (completed or pending) as
// an error; a pending call's future is tracked until it arrives.
func (c *client) expect(env map[string]any, ok bool) bool {
	if !ok {
		return false
	}
	switch env["state"] {
	case "completed":
		return true
	case "pending":
		c.stats.pending.Add(1)
		id, _ := env["future_id"].(string)
		c.track(id)
		return true
	}
	// A command the crash cut short has an UNKNOWN outcome, and the
	// conversation's side effects wait until it is reconciled: do what a
	// client is told to (re-read, then task.reconcile).
	if code, _ := get(env, "error", "code").(string); code == "unknown_open" {
		c.stats.reconciled.Add(1)
		id, _ := get(env, "error", "details", "command_id").(string)
		renv, ok := c.call(context.Background(), "task", map[string]any{"operation": "reconcile", "id": id, "observed": "soak: re-read the file; outputs are not needed"})
		if ok && renv["state"] != "completed" {
			c.stats.fail("client %d: task.reconcile %s: %v", c.id, id, renv["error"])
		}
		return false
	}
	if c.out.isDown() {
		c.stats.excused.Add(1)
		return false
	}
	c.stats.fail("client %d: %v: %v", c.id, env["primitive"], env["error"])
	return false
}

// drain polls until every tracked future and job arrived, or deadline;
// then it asks task.get about a few that did not, for the report.
func (c *client) drain(ctx context.Context, deadline time.Time) {
	for len(c.waiting) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		c.call(ctx, "machine", map[string]any{"operation": "host_info"})
		if len(c.waiting) > 0 {
			time.Sleep(100 * time.Millisecond)
		}
	}
	n := 0
	for id := range c.waiting {
		if n++; n > 2 {
			break
		}
		env, _ := c.call(ctx, "task", map[string]any{"operation": "get", "id": id})
		// task.get answers a job under result.job and a future under
		// result.future; the report says which, its state and its reason (a
		// future's outcome).
		kind, state, reason := "future", get(env, "result", "future", "state"), get(env, "result", "future", "outcome")
		if j := get(env, "result", "job"); j != nil {
			kind, state, reason = "job", get(j, "state"), get(j, "reason")
		}
		c.stats.note("client %d: %s never arrived (seen %d times); task.get: %v, %s state %v, reason %v", c.id, id, c.seen[id], env["state"], kind, state, reason)
	}
}

func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// checkFiles reads every client's file from disk: each must be a whole
// version (no torn file after the crash).
func checkFiles(root string, clients int) (checked, torn int) {
	for i := range clients {
		b, err := os.ReadFile(filepath.Join(root, fmt.Sprintf("c%d.txt", i)))
		if err != nil {
			continue
		}
		checked++
		if !whole(string(b)) {
			torn++
		}
	}
	return checked, torn
}
