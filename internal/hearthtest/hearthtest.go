// Package hearthtest starts real Hearth instances for tests: in-process on
// loopback ports, or as a child serve process built from cmd/hearth-tray,
// and talks to them with the real go-sdk MCP client.
package hearthtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/jsonx"
	"github.com/hearth-dev/hearth/internal/mcpclient"
)

// Instance is an in-process Hearth.
type Instance struct {
	App  *app.App
	URL  string
	Home string
	// Root is the fs root the default config allows (outside Home: the
	// data directory itself is never reachable through fs).
	Root string
	stop func()
}

// Start runs Hearth in-process with a fresh data directory. edit may
// change the config before start (it is written to config.json, so the
// real loading path is used).
func Start(t testing.TB, edit func(*config.Config)) *Instance {
	t.Helper()
	home := t.TempDir()
	return StartHome(t, home, edit)
}

// StartWith is Start with the app's options changed by opts (e.g. a fake
// UI Automation provider) before Hearth opens.
func StartWith(t testing.TB, edit func(*config.Config), opts func(*app.Options)) *Instance {
	t.Helper()
	return startHome(t, t.TempDir(), edit, opts)
}

// TestInlineBudgetMS is the inline budget a test instance gets unless its
// edit sets another: long, so that a call the test expects inline is not
// turned into a pending future by a slow, loaded machine.
const TestInlineBudgetMS = 10_000

// ProductionBudget gives a test instance the shipped inline budget, for
// tests of calls that outlast it.
func ProductionBudget(c *config.Config) {
	c.DispatchInlineBudgetMS = config.Default().DispatchInlineBudgetMS
}

// StartHome runs Hearth in-process on an existing data directory.
func StartHome(t testing.TB, home string, edit func(*config.Config)) *Instance {
	t.Helper()
	return startHome(t, home, edit, nil)
}

// StartHomeWith is StartHome with the app's options changed by opts: a
// test that stops Hearth and starts it again on the same data directory
// and the same panel address (a restart, as the person sees one).
func StartHomeWith(t testing.TB, home string, edit func(*config.Config), opts func(*app.Options)) *Instance {
	t.Helper()
	return startHome(t, home, edit, opts)
}

func startHome(t testing.TB, home string, edit func(*config.Config), opts func(*app.Options)) *Instance {
	t.Helper()
	cfgPath := filepath.Join(home, "config.json")
	root := filepath.Join(filepath.Dir(home), filepath.Base(home)+"-files")
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if _, err := os.Stat(cfgPath); os.IsNotExist(err) {
		c := config.Default()
		c.Roots = []string{root}
		c.MCPAddr, c.PanelAddr = "127.0.0.1:0", "127.0.0.1:0"
		// An ordinary call answers inline even on a loaded test machine; a
		// test of the inline-budget race sets the budget it races.
		c.DispatchInlineBudgetMS = TestInlineBudgetMS
		if edit != nil {
			edit(&c)
		}
		if err := config.Write(cfgPath, c); err != nil {
			t.Fatal(err)
		}
	}
	o := app.Options{DataDir: home, ConfigPath: cfgPath, MCPAddr: "127.0.0.1:0", PanelAddr: "127.0.0.1:0", Version: "test"}
	if opts != nil {
		opts(&o)
	}
	h, err := app.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("start hearth: %v", err)
	}
	in := &Instance{App: h.App, URL: h.MCPURL(), Home: home, Root: root}
	var once sync.Once
	in.stop = func() {
		once.Do(func() {
			if err := h.Stop(); err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(in.stop)
	return in
}

// Stop shuts the instance down (also done at cleanup).
func (in *Instance) Stop() { in.stop() }

// Client is a go-sdk client session bound to one conversation.
type Client struct {
	t            testing.TB
	Session      *mcp.ClientSession
	Conversation string
}

// Connect opens a client session (protocol 2026-07-28 by default) that
// sends _meta["hearth/conversation"] = conversation on every call (none
// when conversation is "").
func Connect(t testing.TB, url, conversation string) *Client {
	t.Helper()
	return ConnectVersion(t, url, conversation, "")
}

// ConnectVersion is Connect with an explicit protocol version.
func ConnectVersion(t testing.TB, url, conversation, version string) *Client {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "hearth-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { s.Close() })
	return &Client{t: t, Session: s, Conversation: conversation}
}

// WaitArrival returns the arrival (future_id, seq, envelope) of
// futureID: from a response already received (a fast call's result can
// ride on the very response that submitted it), else from host_info calls
// made until it shows up, for a minute at most.
func (c *Client) WaitArrival(futureID string, seen ...*Result) map[string]any {
	c.t.Helper()
	find := func(r *Result) map[string]any {
		for _, a := range r.Arrivals() {
			if a["future_id"] == futureID {
				return a
			}
		}
		return nil
	}
	for _, r := range seen {
		if a := find(r); a != nil {
			return a
		}
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if a := find(c.Call("machine", map[string]any{"operation": "host_info"})); a != nil {
			return a
		}
	}
	c.t.Fatalf("no arrival for %s", futureID)
	return nil
}

// Settled calls a tool and returns its envelope's state: the answer's,
// or, when a loaded machine made the call outlast the inline budget and
// answer pending, that of its arrival.
func (c *Client) Settled(tool string, args map[string]any) (string, *Result) {
	c.t.Helper()
	r := c.Call(tool, args)
	if fid := outlasted(r); fid != "" {
		st, _ := Get(c.WaitArrival(fid, r), "envelope.state").(string)
		return st, r
	}
	return r.State(), r
}

// outlasted returns the future of a call that answered pending because it
// outlasted the inline budget (not because it waits for a permit), or "".
func outlasted(r *Result) string {
	if fid, _ := r.Get("future_id").(string); r.State() == "pending" && r.Get("permit_id") == nil {
		return fid
	}
	return ""
}

// Final calls a tool and returns its final answer: the answer itself, or,
// when a loaded machine made the call outlast the inline budget and answer
// pending (not waiting for a permit), the envelope that arrived for it.
func (c *Client) Final(tool string, args map[string]any) *Result {
	c.t.Helper()
	r := c.Call(tool, args)
	fid := outlasted(r)
	if fid == "" {
		return r
	}
	env, _ := c.WaitArrival(fid, r)["envelope"].(map[string]any)
	raw, err := json.Marshal(env)
	if err != nil {
		c.t.Fatalf("the arrived envelope of %s: %v", fid, err)
	}
	return &Result{Env: env, Raw: raw}
}

// ScatterOne runs one call through run.scatter and returns the envelope
// of its arrival. A call refused at submission makes the scatter answer
// blocked (all_refused) with the futures in error.details, and one that
// ran and failed at once makes it answer failed (all_failed) with the
// futures in result; its arrival is still what counts.
func (c *Client) ScatterOne(call map[string]any) map[string]any {
	c.t.Helper()
	r := c.Call("run", map[string]any{"operation": "scatter", "calls": []any{call}})
	fid, _ := r.Get("result.futures.0.future_id").(string)
	if fid == "" {
		fid, _ = r.Get("error.details.futures.0.future_id").(string)
	}
	if fid == "" {
		c.t.Fatalf("scatter: %s", r.Raw)
	}
	env, _ := c.WaitArrival(fid, r)["envelope"].(map[string]any)
	return env
}

// Result is a decoded tool result (State, Get, Arrivals, …).
type Result = mcpclient.Result

// Get walks a dotted path in decoded JSON; numeric parts index arrays.
func Get(v any, path string) any { return jsonx.GetPath(v, path) }

// Call calls a tool and fails the test on a transport error.
func (c *Client) Call(tool string, args map[string]any) *Result {
	c.t.Helper()
	r, err := c.TryCall(tool, args, nil)
	if err != nil {
		c.t.Fatalf("call %s %v: %v", tool, args, err)
	}
	return r
}

// TryCall calls a tool with extra _meta entries.
func (c *Client) TryCall(tool string, args map[string]any, meta map[string]any) (*Result, error) {
	m := mcp.Meta{}
	if c.Conversation != "" {
		m["hearth/conversation"] = c.Conversation
	}
	for k, v := range meta {
		m[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.Session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: m})
	if err != nil {
		return nil, err
	}
	return mcpclient.Decode(res)
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Binary builds cmd/hearth-tray once per test process and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command here (e.g. a Windows test binary under Wine): cannot build hearth-tray")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "hearth-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "hearth-tray")
		if runtime.GOOS == "windows" {
			buildPath += ".exe"
		}
		cmd := exec.Command("go", "build", "-o", buildPath, "github.com/hearth-dev/hearth/cmd/hearth-tray")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// WriteConfig writes home's config.json: the defaults, changed by edit.
func WriteConfig(t testing.TB, home string, edit func(*config.Config)) {
	t.Helper()
	c := config.Default()
	if edit != nil {
		edit(&c)
	}
	if err := config.Write(filepath.Join(home, "config.json"), c); err != nil {
		t.Fatal(err)
	}
}

// Trusted sets the trusted policy mode (exec without permits), for tests
// of everything but governance.
func Trusted(c *config.Config) { c.Policy.Mode = config.ModeTrusted }

// Process is a child serve process.
type Process struct {
	Cmd      *exec.Cmd
	URL      string
	PanelURL string
	Home     string
	Stderr   *strings.Builder
	// exited is closed once Wait has returned; exitErr is its answer.
	// Kill, Exited and Interrupt read the two, never Cmd.ProcessState,
	// which Wait writes on its own goroutine.
	exited  chan struct{}
	exitErr error
}

// StartProcess starts `hearth-tray serve` on free loopback ports with
// HEARTH_HOME=home and waits for its listening line.
func StartProcess(t testing.TB, home string) *Process {
	t.Helper()
	return StartProcessOf(t, Binary(t), home)
}

// StartProcessOf is StartProcess for the hearth-tray program at bin (a
// test's own build, such as an older version to update from).
func StartProcessOf(t testing.TB, bin, home string) *Process {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--mcp-addr", "127.0.0.1:0", "--panel-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "HEARTH_HOME="+home, "HEARTH_CONFIG=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{Cmd: cmd, Home: home, Stderr: &strings.Builder{}, exited: make(chan struct{})}
	cmd.Stderr = &lockedWriter{w: p.Stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
	}()
	go func() { p.exitErr = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { p.Kill() })
	deadline := time.After(30 * time.Second)
	for p.URL == "" || p.PanelURL == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited before listening: %s", p.Stderr.String())
			}
			if u, ok := strings.CutPrefix(l, "Hearth listening at "); ok {
				p.URL = u
			}
			if u, ok := strings.CutPrefix(l, "Control panel at "); ok {
				p.PanelURL = u
			}
		case <-deadline:
			t.Fatalf("serve did not print its address: %s", p.Stderr.String())
		}
	}
	return p
}

// Kill SIGKILLs the process (no clean shutdown) and waits for it.
func (p *Process) Kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.Cmd.Process.Kill()
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
	}
}

// Exited waits up to d for the process to exit by itself and returns its
// exit error.
func (p *Process) Exited(t testing.TB, d time.Duration) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.exitErr
	case <-time.After(d):
		t.Fatalf("serve did not exit within %s", d)
		return nil
	}
}

// Interrupt asks the process to stop cleanly and returns its exit error.
func (p *Process) Interrupt(t testing.TB) error {
	t.Helper()
	if err := p.Cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
		return p.exitErr
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not exit after interrupt")
		return nil
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
