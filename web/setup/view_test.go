package setup

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/tunnel"
	"github.com/hearth-dev/hearth/web/session"
	"github.com/hearth-dev/hearth/web/ui"
)

func render(t *testing.T, v View) string {
	t.Helper()
	var b strings.Builder
	if err := Page(ui.Chrome{Title: "Setup", Active: "setup", CSRF: "tok"}, v).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func check(t *testing.T, html string, want, absent []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(html, w) {
			t.Errorf("missing %q", w)
		}
	}
	for _, a := range absent {
		if strings.Contains(html, a) {
			t.Errorf("unexpected %q", a)
		}
	}
}

func TestFreshSetup(t *testing.T) {
	html := render(t, View{
		Status:  tunnel.Status{State: tunnel.StateNotConfigured, Reason: "no tunnel ID yet"},
		Profile: "hearth-local", MCPURL: "http://127.0.0.1:3000/mcp",
		Client: Client{Name: "tunnel-client.exe", HearthName: "hearth-tray.exe"},
	})
	check(t, html, []string{
		`data-testid="nav-setup" aria-current="page"`,
		`hx-get="/setup/live" hx-trigger="every 2s"`,
		`data-testid="tunnel-state" data-state="not_configured"`, `data-testid="tunnel-reason">no tunnel ID yet<`,
		`data-testid="client-missing"`, `<code>tunnel-client.exe</code>`, `<code>hearth-tray.exe</code>`,
		`href="https://github.com/openai/tunnel-client/releases/latest"`,
		`data-testid="pin-form"`, `action="/setup/pin"`, `name="client_path"`, `data-testid="pin-button">Pin tunnel-client<`,
		`data-testid="key-none"`, `data-testid="key-form"`, `action="/setup/key"`,
		`type="password" id="tunnel-key" name="key" required autocomplete="off"`,
		`data-testid="init-form"`, `data-testid="tunnel-id"`, `name="tunnel_id" value=""`,
		`data-testid="setup-mcp-url">http://127.0.0.1:3000/mcp<`,
		`data-testid="doctor-form"`, `data-testid="start-button"`, `data-testid="stop-button"`, `data-testid="restart-button"`,
		`data-testid="autostart-form"`, `data-testid="logon"`, "available on Windows after install",
		`name="csrf" value="tok"`,
	}, []string{
		`data-testid="key-hint"`, `data-testid="key-clear-form"`, `data-testid="clipboard-notice"`, `/static/setup.js`,
		`data-testid="command-result"`, `data-testid="client-found"`, `data-testid="client-pinned"`, `data-testid="tunnel-last-error"`, ` checked`,
	})
	// Every form, the pin's included, carries the CSRF token.
	if forms, tokens := strings.Count(html, "<form "), strings.Count(html, `name="csrf" value="tok"`); forms != tokens {
		t.Errorf("%d forms, %d CSRF fields", forms, tokens)
	}
}

const pinnedSum = "ea6c734949168f18d643645d05de2875763ba2c4b8bfdb45b8fb036d10f75021"

func TestFoundUnpinned(t *testing.T) {
	html := render(t, View{
		Status: tunnel.Status{State: tunnel.StateNotConfigured, Reason: "tunnel-client is not pinned yet"},
		Client: Client{Found: `C:\Users\me\AppData\Local\Microsoft\WindowsApps\tunnel-client.exe`, Source: "PATH",
			Name: "tunnel-client.exe", HearthName: "hearth-tray.exe"},
	})
	check(t, html, []string{
		`data-testid="client-found"`, `Found (PATH)`,
		`data-testid="client-path">C:\Users\me\AppData\Local\Microsoft\WindowsApps\tunnel-client.exe<`,
		`data-testid="client-unpinned"`, "Leave it empty to pin the program found above.",
		`data-testid="pin-button">Pin tunnel-client<`,
	}, []string{`data-testid="client-pinned"`, `data-testid="client-sha256"`, `data-testid="client-missing"`})
}

func TestPinnedClientChanged(t *testing.T) {
	now := strings.Repeat("ab", 32)
	html := render(t, View{
		Status: tunnel.Status{State: tunnel.StateClientChanged, Reason: `the pinned tunnel-client C:\Tools\tunnel-client.exe no longer has the SHA-256 pinned on the Setup page`},
		Client: Client{Pinned: tunnel.Pin{Path: `C:\Tools\tunnel-client.exe`, SHA256: pinnedSum}, Changed: true, Now: now,
			Name: "tunnel-client.exe", HearthName: "hearth-tray.exe"},
	})
	check(t, html, []string{
		`data-testid="tunnel-state" data-state="client_changed"`, `<span class="state-on">Not run: tunnel-client changed since it was pinned<`,
		`data-testid="client-pinned"`, `data-testid="client-path">C:\Tools\tunnel-client.exe<`,
		`data-testid="client-sha256">` + pinnedSum + `<`,
		`data-testid="client-changed"`, "has changed since you pinned it", `data-testid="client-sha256-now">` + now + `<`,
		`data-testid="pin-button">Pin again<`, "Leave it empty to pin the file above again.",
	}, []string{`data-testid="client-pin-note"`, `data-testid="client-found"`, "This file is gone"})

	html = render(t, View{Client: Client{Pinned: tunnel.Pin{Path: `C:\Tools\tunnel-client.exe`, SHA256: pinnedSum}, Changed: true, Gone: true}})
	check(t, html, []string{`data-testid="client-changed"`, "This file is gone"}, []string{`data-testid="client-sha256-now"`})
}

func TestConfiguredSetup(t *testing.T) {
	html := render(t, View{
		Status: tunnel.Status{State: tunnel.StateReady, Reason: "tunnel-client reports ready", PID: 4242, Restarts: 2,
			LastError: "error: control plane refused key [REDACTED]", Since: time.Now()},
		Running: true, KeyPresent: true, KeyHint: "…wxyz", TunnelID: "tunnel_abc123", Profile: "hearth-local",
		Autostart: true, Client: Client{Pinned: tunnel.Pin{Path: `C:\Tools\tunnel-client.exe`, SHA256: pinnedSum}, Name: "tunnel-client.exe", HearthName: "hearth-tray.exe"},
		Logon:    Logon{Available: true, On: true},
		KeySaved: true,
		Result: &Result{Command: "init", CommandResult: tunnel.CommandResult{
			Args: []string{"init", "--profile", "hearth-local"}, ExitCode: 1, Stdout: "", Stderr: "error: profile <exists>",
			Duration: 1500 * time.Millisecond, Truncated: true,
		}},
	})
	check(t, html, []string{
		`data-testid="tunnel-state" data-state="ready"`, `>Ready<`, `data-testid="tunnel-pid">4242<`,
		`data-testid="tunnel-restarts">2<`, `data-testid="tunnel-last-error">error: control plane refused key [REDACTED]<`,
		`data-testid="client-pinned"`, `data-testid="client-path">C:\Tools\tunnel-client.exe<`,
		`data-testid="client-sha256">` + pinnedSum + `<`, `data-testid="client-pin-note"`, `data-testid="pin-button">Pin again<`,
		`data-testid="key-hint">…wxyz<`, `data-testid="key-clear-form"`, `action="/setup/key/clear"`,
		`data-testid="clipboard-notice"`, `id="clear-clipboard" data-testid="clear-clipboard" hidden`,
		`<script src="/static/setup.js" defer></script>`,
		`name="tunnel_id" value="tunnel_abc123"`, `id="tunnel-autostart" name="autostart" value="on" checked`,
		`data-testid="command-result" data-command="init"`,
		`data-testid="result-command">tunnel-client init --profile hearth-local<`,
		`data-testid="result-exit">1 <span class="state-on">(failed)`,
		`data-testid="result-stdout">(nothing)<`, `data-testid="result-stderr">error: profile &lt;exists&gt;<`,
		`data-testid="result-duration">1.5s<`, `data-testid="result-truncated"`,
		"on (change it from the tray icon",
	}, []string{`data-testid="key-none"`, `data-testid="client-missing"`, `data-testid="client-changed"`, "available on Windows after install"})
	// The password field is never filled in.
	field := html[strings.Index(html, `<input type="password"`):]
	if field = field[:strings.Index(field, ">")]; strings.Contains(field, "value=") {
		t.Errorf("the key field has a value: %s", field)
	}
}

func TestStateFragment(t *testing.T) {
	var b strings.Builder
	if err := State(View{Status: tunnel.Status{State: tunnel.StateCrashLoop, Reason: "exited 5 times"}}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	check(t, b.String(), []string{`data-state="crash_loop"`, "Stopped after repeated crashes", `data-testid="tunnel-pid">—<`},
		[]string{"<html", "<h1", "<form"})
}

func TestValidTunnelID(t *testing.T) {
	for id, want := range map[string]bool{
		"tunnel_0123456789abcdef": true, "tunnel_ABCDEF": true, "tunnel_": false, "tunnel_xyz": false,
		"0123abcd": false, "tunnel_01 23": false, "-tunnel_01": false, "sk-proj-0123456789": false,
		"tunnel_" + strings.Repeat("a", 121): false, "tunnel_" + strings.Repeat("a", 120): true,
	} {
		if got := ValidTunnelID(id); got != want {
			t.Errorf("ValidTunnelID(%q) = %v", id, got)
		}
	}
}

func TestOutcomesAreOneShotAndBounded(t *testing.T) {
	var o outcomes
	first := &session.Session{}
	o.put(first, outcome{keySaved: true})
	if v, ok := o.pop(first); !ok || !v.keySaved {
		t.Fatal("outcome not returned")
	}
	if _, ok := o.pop(first); ok {
		t.Fatal("outcome returned twice")
	}
	o.put(first, outcome{keySaved: true})
	for range maxOutcomes + 4 {
		o.put(&session.Session{}, outcome{})
	}
	if len(o.m) > maxOutcomes {
		t.Fatalf("%d outcomes kept", len(o.m))
	}
	if _, ok := o.pop(first); ok {
		t.Fatal("the oldest outcome was not dropped")
	}
}
