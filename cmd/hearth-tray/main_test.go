//go:build !windows

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
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
	// The first printed a one-time login URL; the second names its panel's address.
	panel, _, _ := strings.Cut(p.PanelURL, "login?")
	if err != nil || !strings.Contains(out, "already running") || !strings.Contains(out, panel) {
		t.Fatalf("second serve: %v %q (first at %s)", err, out, p.PanelURL)
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
		if r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"ok"}}); r.State() != "completed" {
			t.Fatalf("the running serve must honour the CLI reset: %s", r.Raw)
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
