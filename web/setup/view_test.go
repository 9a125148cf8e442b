package setup

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/tunnel"
	"github.com/hearth-dev/hearth/web/session"
	"github.com/hearth-dev/hearth/web/status"
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
		`data-testid="step-program" data-step-state="current"`, `data-testid="step-key" data-step-state="waiting"`,
		`data-testid="client-missing"`, `<code>tunnel-client.exe</code>`, `data-testid="program-folder"`, `data-testid="open-folder"`,
		`href="https://github.com/openai/tunnel-client/releases/latest"`,
		`data-testid="pin-check-form"`, `action="/setup/pin/check"`, `name="client_path"`, `data-testid="pin-check-button"`,
		`data-testid="key-none"`,
		`data-testid="init-form"`, `data-testid="tunnel-id-init"`, `name="tunnel_id" value=""`,
		`data-testid="setup-mcp-url">http://127.0.0.1:3000/mcp<`,
		`data-testid="doctor-form"`, `data-testid="start-button"`, `data-testid="stop-button"`, `data-testid="restart-button"`,
		`data-testid="autostart-form"`, `data-testid="logon"`, "available on Windows after install",
		`name="csrf" value="tok"`,
	}, []string{
		`data-testid="key-hint"`, `data-testid="key-clear-form"`, `data-testid="clipboard-notice"`, `data-testid="key-form"`, `data-testid="connect-button"`,
		`data-testid="command-result"`, `data-testid="client-candidates"`, `data-testid="client-pinned"`, `data-testid="tunnel-last-error"`, ` checked`,
	})
	// Every form, the pin's included, carries the CSRF token.
	if forms, tokens := strings.Count(html, "<form "), strings.Count(html, `name="csrf" value="tok"`); forms != tokens {
		t.Errorf("%d forms, %d CSRF fields", forms, tokens)
	}
}

const pinnedSum = "ea6c734949168f18d643645d05de2875763ba2c4b8bfdb45b8fb036d10f75021"

// TestCandidatesShown: every tunnel-client found is shown with its full
// path, where it came from and its SHA-256; one on PATH or inside an fs
// root carries a warning; each pin form posts back exactly the path and
// the hash shown.
// TestSetupSaysWhichPortAndWhy: a listener moved off a taken port is
// named on Setup, with the addresses under Details.
func TestSetupSaysWhichPortAndWhy(t *testing.T) {
	v := View{Status: tunnel.Status{State: tunnel.StateNotConfigured, Reason: "no tunnel ID yet"}}
	check(t, render(t, v), nil, []string{"status-port-move"})
	v.Ports = []status.PortMove{{Sentence: "Port 3000 was in use by another program, so the MCP endpoint now uses port 52814.",
		Key: "mcp_addr", Configured: "127.0.0.1:3000", Bound: "127.0.0.1:52814", Cause: "address already in use"}}
	check(t, render(t, v), []string{`data-testid="status-port-move">Port 3000 was in use by another program`, "127.0.0.1:52814"}, nil)
}

func TestCandidatesShown(t *testing.T) {
	const onPath = `C:\Users\me\AppData\Local\Microsoft\WindowsApps\tunnel-client.exe`
	const beside = `C:\Users\me\AppData\Local\Programs\Hearth\tunnel-client.exe`
	other := strings.Repeat("cd", 32)
	html := render(t, View{
		Status: tunnel.Status{State: tunnel.StateNotConfigured, Reason: "tunnel-client is not pinned yet"},
		Client: Client{Candidates: []tunnel.Candidate{
			{Path: beside, Source: tunnel.SourceBesideExe, SHA256: pinnedSum},
			{Path: onPath, Source: tunnel.SourcePath, SHA256: other, Root: `C:\Users\me`},
		}, Name: "tunnel-client.exe", HearthName: "hearth-tray.exe"},
	})
	check(t, html, []string{
		`data-testid="client-unpinned"`, `data-testid="client-candidates"`,
		`data-testid="client-candidate" data-source="beside hearth-tray"`,
		`data-testid="candidate-path">` + beside + `<`, `(found beside hearth-tray)`,
		`data-testid="candidate-sha256">` + pinnedSum + `<`,
		`name="client_path" value="` + beside + `"`, `name="client_sha256" value="` + pinnedSum + `"`,
		`data-testid="pin-button">Pin this file<`,
		`data-testid="client-candidate" data-source="PATH"`,
		`data-testid="candidate-path">` + onPath + `<`, `(found on PATH)`,
		`data-testid="candidate-sha256">` + other + `<`,
		`data-testid="candidate-warning-path"`, `data-testid="candidate-warning-root"`, `C:\Users\me</span>`,
		`name="client_path" value="` + onPath + `"`, `name="client_sha256" value="` + other + `"`,
		`data-testid="pin-button">I checked its SHA-256: pin this file<`,
		`data-testid="pin-check-form"`, `action="/setup/pin/check"`,
	}, []string{`data-testid="client-pinned"`, `data-testid="client-sha256"`, `data-testid="client-missing"`, `data-testid="candidate-pinned"`})
	// The warnings belong to the PATH candidate only.
	if i := strings.Index(html, `data-source="PATH"`); strings.Contains(html[:i], "candidate-warning") {
		t.Error("the candidate beside hearth-tray carries a warning")
	}
	// Every form carries the CSRF token.
	if forms, tokens := strings.Count(html, "<form "), strings.Count(html, `name="csrf" value="tok"`); forms != tokens {
		t.Errorf("%d forms, %d CSRF fields", forms, tokens)
	}

	// A typed path is shown, hashed, with its own pin form; a file that
	// cannot be read has none.
	html = render(t, View{Client: Client{
		Checked:    &tunnel.Candidate{Path: `D:\Tools\tunnel-client.exe`, Source: tunnel.SourceTyped, SHA256: other},
		Candidates: []tunnel.Candidate{{Path: beside, Source: tunnel.SourceBesideExe, Err: errors.New("sharing violation")}},
	}})
	check(t, html, []string{
		`data-testid="client-checked"`, `data-testid="candidate-path">D:\Tools\tunnel-client.exe<`, `(the path you gave)`,
		`name="client_path" value="D:\Tools\tunnel-client.exe"`, `name="client_sha256" value="` + other + `"`,
		`data-testid="candidate-unreadable"`,
	}, []string{"sharing violation", `value="` + beside + `"`})
}

func TestPinnedClientChanged(t *testing.T) {
	now := strings.Repeat("ab", 32)
	html := render(t, View{
		Pinned: true,
		Status: tunnel.Status{State: tunnel.StateClientChanged, Reason: `the pinned tunnel-client C:\Tools\tunnel-client.exe no longer has the SHA-256 pinned on the Setup page`},
		Client: Client{Pinned: tunnel.Pin{Path: `C:\Tools\tunnel-client.exe`, SHA256: pinnedSum}, Changed: true, Now: now,
			Name: "tunnel-client.exe", HearthName: "hearth-tray.exe"},
	})
	check(t, html, []string{
		`data-testid="tunnel-state" data-state="client_changed"`, `<span class="state-on">Not run: tunnel-client changed since it was pinned<`,
		`data-testid="client-pinned"`, `data-testid="client-path">C:\Tools\tunnel-client.exe<`,
		`data-testid="client-sha256">` + pinnedSum + `<`,
		`data-testid="client-changed"`, "changed since you trusted it", `data-testid="client-sha256-now">` + now + `<`,
	}, []string{`data-testid="client-unpinned"`, "is gone"})

	html = render(t, View{Pinned: true, Client: Client{Pinned: tunnel.Pin{Path: `C:\Tools\tunnel-client.exe`, SHA256: pinnedSum}, Changed: true, Gone: true}})
	check(t, html, []string{`data-testid="client-changed"`, "is gone"}, []string{`data-testid="client-sha256-now"`})
}

func TestConfiguredSetup(t *testing.T) {
	html := render(t, View{
		Status: tunnel.Status{State: tunnel.StateReady, Reason: "tunnel-client reports ready", PID: 4242, Restarts: 2,
			LastError: "error: control plane refused key [REDACTED]", Since: time.Now()},
		Running: true, Pinned: true, KeyPresent: true, KeyHint: "…wxyz", TunnelID: "tunnel_abc123", Profile: "hearth-local",
		Autostart: true, Client: Client{Pinned: tunnel.Pin{Path: `C:\Tools\tunnel-client.exe`, SHA256: pinnedSum}, Name: "tunnel-client.exe", HearthName: "hearth-tray.exe",
			Candidates: []tunnel.Candidate{{Path: `C:\Tools\tunnel-client.exe`, Source: tunnel.SourceConfigured, SHA256: pinnedSum}}},
		Logon:    Logon{Available: true, On: true},
		KeySaved: true,
		Result: &Result{Command: "init", CommandResult: tunnel.CommandResult{
			Args: []string{"init", "--profile", "hearth-local"}, ExitCode: 1, Stdout: "", Stderr: "error: profile <exists>",
			Duration: 1500 * time.Millisecond, Truncated: true,
		}},
	})
	check(t, html, []string{
		`data-testid="tunnel-state" data-state="ready"`, `>Ready<`, `data-testid="tunnel-pid">4242<`,
		`data-testid="tunnel-restarts">2<`,
		`data-testid="client-pinned"`, `data-testid="client-path">C:\Tools\tunnel-client.exe<`,
		`data-testid="client-sha256">` + pinnedSum + `<`, `data-testid="client-pin-note"`,
		`data-testid="candidate-pinned"`,
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
	}, []string{`data-testid="key-none"`, `data-testid="client-missing"`, `data-testid="client-changed"`, "available on Windows after install",
		// Under State: Ready an old error line is no news.
		`data-testid="tunnel-last-error"`})
	// The password field is never filled in.
	field := html[strings.Index(html, `<input type="password"`):]
	if field = field[:strings.Index(field, ">")]; strings.Contains(field, "value=") {
		t.Errorf("the key field has a value: %s", field)
	}
}

func TestStateFragment(t *testing.T) {
	var b strings.Builder
	if err := State(View{Status: tunnel.Status{State: tunnel.StateCrashLoop, Reason: "exited 5 times", LastError: "fatal: <boom>"}}).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	// Not ready: the last error in words, its line one click further.
	check(t, b.String(), []string{`data-state="crash_loop"`, "Stopped after repeated crashes", `data-testid="tunnel-pid">—<`,
		"The connection program reported an error.", `<summary>Its exact words</summary>`, `data-testid="tunnel-last-error-line">fatal: &lt;boom&gt;</code>`},
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
