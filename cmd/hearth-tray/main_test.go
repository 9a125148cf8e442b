//go:build !windows

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/ledger"
)

func runCLI(t *testing.T, home string, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(hearthtest.Binary(t), args...)
	cmd.Env = append(os.Environ(), "HEARTH_HOME="+home, "HEARTH_CONFIG=")
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func TestSecondServeReportsTheFirst(t *testing.T) {
	home := t.TempDir()
	p := hearthtest.StartProcess(t, home)
	out, err := runCLI(t, home, "", "serve", "--mcp-addr", "127.0.0.1:0", "--panel-addr", "127.0.0.1:0")
	// The first printed a one-time login URL; the second, whose output is
	// not a terminal (a model driving a shell through machine.exec has
	// none), names its panel's address and how to get a sign-in link, and
	// no login token.
	panel, _, _ := strings.Cut(p.PanelURL, "login?")
	if err != nil || !strings.Contains(out, "already running") || !strings.Contains(out, panel) || !strings.Contains(out, "run hearth-tray serve in a terminal window") {
		t.Fatalf("second serve: %v %q (first at %s)", err, out, p.PanelURL)
	}
	if strings.Contains(out, "token=") {
		t.Fatalf("a second serve without a terminal printed a login token: %q", out)
	}
}

func TestUnknownCommandIsUsageError(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"fly"}, &out, &errb)
	if _, ok := err.(usageError); !ok {
		t.Fatalf("want a usage error, got %v", err)
	}
}

// TestSafetyResetAndLedgerCLI drives the operator CLI against a running
// serve: the model latches the e-stop; a reset without a terminal is
// refused; with a terminal (script(1) provides one) and the typed word it
// releases the latch the running serve then honours; the ledger exports and
// verifies offline, and a tampered bundle fails.
func TestSafetyResetAndLedgerCLI(t *testing.T) {
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, hearthtest.Trusted)
	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "cli")
	if r := c.Call("machine", map[string]any{"operation": "estop", "reason": "cli test"}); r.State() != "completed" {
		t.Fatalf("%s", r.Raw)
	}
	out, err := runCLI(t, home, "reset\n", "safety", "reset", "--operator", "alice")
	if err == nil || !strings.Contains(out, "interactive terminal") {
		t.Fatalf("reset without a terminal must be refused: %v %s", err, out)
	}
	if r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo"}); r.Get("error.code") != "estop" {
		t.Fatalf("still latched: %s", r.Raw)
	}
	if _, err := exec.LookPath("script"); err == nil {
		cmdline := hearthtest.Binary(t) + " safety reset --operator alice"
		script := exec.Command("script", "-qec", cmdline, "/dev/null")
		script.Env = append(os.Environ(), "HEARTH_HOME="+home, "HEARTH_CONFIG=")
		script.Stdin = strings.NewReader("wrong\n")
		b, _ := script.CombinedOutput()
		if !strings.Contains(string(b), "not confirmed") {
			t.Fatalf("a wrong word must not reset: %s", b)
		}
		script = exec.Command("script", "-qec", cmdline, "/dev/null")
		script.Env = append(os.Environ(), "HEARTH_HOME="+home, "HEARTH_CONFIG=")
		script.Stdin = strings.NewReader("reset\n")
		if b, err := script.CombinedOutput(); err != nil || !strings.Contains(string(b), "e-stop released") {
			t.Fatalf("reset on a terminal: %v %s", err, b)
		}
		if r := c.Final("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"ok"}}); r.State() != "completed" {
			t.Fatalf("the running serve must honour the CLI reset: %s", r.Raw)
		}
		// The reset is journaled with where it was made, as the panel's
		// is with how its session was signed in, and announced.
		off, err := app.OpenOffline(t.Context(), home, config.Path(home))
		if err != nil {
			t.Fatal(err)
		}
		tail, err := off.Ledger.Tail(t.Context(), 20)
		lowered, lerr := off.Gov.Lowered(t.Context())
		off.Close()
		if err != nil || lerr != nil {
			t.Fatal(err, lerr)
		}
		var origin string
		for _, e := range tail {
			if e.Kind == ledger.KindReset {
				var d struct{ Session string }
				if err := json.Unmarshal(e.Data, &d); err != nil {
					t.Fatal(err)
				}
				origin = d.Session
			}
		}
		if origin != govern.OriginTerminal {
			t.Fatalf("the CLI reset's ledger entry has session %q, want %q", origin, govern.OriginTerminal)
		}
		if len(lowered) != 1 || lowered[0].Session != govern.OriginTerminal || lowered[0].By != "alice" {
			t.Fatalf("the CLI reset is not announced with its origin: %+v", lowered)
		}
	} else {
		t.Log("script(1) not available: terminal reset path not exercised")
	}
	out, err = runCLI(t, home, "", "safety", "status")
	if err != nil || !strings.Contains(out, "queue held: true") {
		t.Fatalf("status: %v %s", err, out)
	}
	bundle := filepath.Join(t.TempDir(), "evidence.json")
	if out, err := runCLI(t, home, "", "ledger", "export", "--out", bundle); err != nil {
		t.Fatalf("export: %v %s", err, out)
	}
	if out, err := runCLI(t, home, "", "ledger", "verify", bundle); err != nil || !strings.Contains(out, "ledger OK") {
		t.Fatalf("verify bundle: %v %s", err, out)
	}
	if out, err := runCLI(t, home, "", "ledger", "verify"); err != nil || !strings.Contains(out, "ledger OK") {
		t.Fatalf("verify live database: %v %s", err, out)
	}
	b, _ := os.ReadFile(bundle)
	tampered := bytes.Replace(b, []byte(`estop`), []byte(`estoq`), 1)
	if bytes.Equal(b, tampered) {
		t.Fatal("bundle lacks the estop entry")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, tampered, 0o600)
	if out, err := runCLI(t, home, "", "ledger", "verify", bad); err == nil || !strings.Contains(out, "failed") {
		t.Fatalf("a tampered bundle must fail: %v %s", err, out)
	}
}

func TestMCPConfigUsesTheRunningAddress(t *testing.T) {
	home := t.TempDir()
	out, err := runCLI(t, home, "", "mcp-config", "--json")
	if err != nil || !strings.Contains(out, `"url": "http://127.0.0.1:3000/mcp"`) || !strings.Contains(out, `"running": false`) {
		t.Fatalf("configured address: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, "config.json")); err == nil {
		t.Fatal("mcp-config must not write a config")
	}
	p := hearthtest.StartProcess(t, home)
	out, err = runCLI(t, home, "", "mcp-config")
	if err != nil || !strings.Contains(out, "--mcp-server-url "+p.URL) || !strings.Contains(out, "(running)") {
		t.Fatalf("running address %s: %v %s", p.URL, err, out)
	}
}

// TestServeMovesOffTakenPorts: the configured ports held by another
// program (real listeners), serve starts anyway, says in plain words which
// port it uses and why, prints the real address, and serves there; with
// --mcp-addr naming a taken port it fails saying so.
func TestServeMovesOffTakenPorts(t *testing.T) {
	home := t.TempDir()
	var held []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		held = append(held, ln.Addr().String())
	}
	hearthtest.WriteConfig(t, home, func(c *config.Config) {
		c.Roots = []string{t.TempDir()}
		c.MCPAddr, c.PanelAddr = held[0], held[1]
	})
	out, err := runCLI(t, home, "", "serve", "--mcp-addr", held[0])
	if err == nil || !strings.Contains(out, "in use by another program") || !strings.Contains(out, "--mcp-addr "+held[0]) {
		t.Fatalf("serve --mcp-addr on a taken port: %v %q", err, out)
	}

	cmd := exec.Command(hearthtest.Binary(t), "serve")
	cmd.Env = append(os.Environ(), "HEARTH_HOME="+home, "HEARTH_CONFIG=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	var lines []string
	var url string
	for url == "" && sc.Scan() {
		lines = append(lines, sc.Text())
		if u, ok := strings.CutPrefix(sc.Text(), "Hearth listening at "); ok {
			url = u
		}
	}
	if url == "" {
		t.Fatalf("serve did not print its address: %q %s", lines, stderr.String())
	}
	_, mcpPort, _ := net.SplitHostPort(held[0])
	if strings.Contains(url, held[0]) || !strings.Contains(strings.Join(lines, "\n"), "Port "+mcpPort+" was in use by another program, so the MCP endpoint") {
		t.Fatalf("serve printed %q", lines)
	}
	c := hearthtest.Connect(t, url, "moved")
	if st, r := c.Settled("machine", map[string]any{"operation": "host_info"}); st != "completed" {
		t.Fatalf("host_info at the printed address %s: %s %s", url, st, r.Raw)
	}
}

// TestServeDamagedDatabaseSaysRestore: serve on a damaged database exits
// non-zero with the plain answer: the newest verified backup's file name
// and the exact restore command.
func TestServeDamagedDatabaseSaysRestore(t *testing.T) {
	o, info := damagedHome(t)
	out, err := runCLI(t, o.DataDir, "", "serve", "--mcp-addr", "127.0.0.1:0", "--panel-addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(out, "is damaged") || !strings.Contains(out, "\n    hearth-tray restore "+info.File+"\n") || !strings.Contains(out, "never deleted") {
		t.Fatalf("serve on a damaged database: %v\n%s", err, out)
	}
	if out, err := runCLI(t, o.DataDir, "", "restore", info.File); err != nil || !strings.Contains(out, "kept in") {
		t.Fatalf("the printed command: %v %s", err, out)
	}
	// Restored, serve starts.
	hearthtest.StartProcess(t, o.DataDir)
}

// TestSecondServeOnATerminalPrintsAWorkingLogin: a second serve whose
// output is a terminal (script(1) gives it one) prints the first one's
// panel with a fresh one-time login URL, which signs in (a session cookie
// and the Status page); the same URL does not sign in twice.
func TestSecondServeOnATerminalPrintsAWorkingLogin(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) not available: no terminal to run the second serve on")
	}
	home := t.TempDir()
	p := hearthtest.StartProcess(t, home)
	cmd := exec.Command("script", "-qec", hearthtest.Binary(t)+" serve --mcp-addr 127.0.0.1:0 --panel-addr 127.0.0.1:0", "/dev/null")
	cmd.Env = append(os.Environ(), "HEARTH_HOME="+home, "HEARTH_CONFIG=")
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "already running") {
		t.Fatalf("second serve on a terminal: %v %s", err, b)
	}
	panel, _, _ := strings.Cut(p.PanelURL, "login?")
	var login string
	for _, l := range strings.Split(string(b), "\n") {
		if u, ok := strings.CutPrefix(strings.TrimSpace(l), "Control panel at "); ok {
			login = u
		}
	}
	if !strings.HasPrefix(login, panel+"login?token=") || login == p.PanelURL {
		t.Fatalf("second serve printed the panel as %q (first: %s)\n%s", login, p.PanelURL, b)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(login)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Value != "" && c.MaxAge >= 0 {
			session = c
		}
	}
	if resp.StatusCode >= 400 || session == nil {
		t.Fatalf("the printed login URL did not sign in: %s, cookies %v", resp.Status, resp.Cookies())
	}
	req, _ := http.NewRequest(http.MethodGet, panel, nil)
	req.AddCookie(session)
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), `data-testid="status-live"`) {
		t.Fatalf("the Status page with the session: %s", resp.Status)
	}
	resp, err = noRedirect.Get(login)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(resp.Cookies()) > 0 && resp.StatusCode < 400 {
		for _, c := range resp.Cookies() {
			if c.Value != "" && c.MaxAge >= 0 {
				t.Fatalf("the one-time login URL signed in twice: %s %v", resp.Status, resp.Cookies())
			}
		}
	}
}
