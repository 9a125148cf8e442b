package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestLoadCreatesDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "config.json")
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy.Mode != ModeAsk || c.MCPAddr != "127.0.0.1:3000" || c.DispatchInlineBudgetMS != 100 {
		t.Fatalf("defaults: %+v", c)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("config not written: %v", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.Errorf("config file mode %v is readable by others", st.Mode())
	}
	again, err := Load(path)
	if err != nil || again.MCPAddr != c.MCPAddr {
		t.Fatalf("reload: %v %+v", err, again)
	}
}

func TestParseRefusesNamingTheKey(t *testing.T) {
	cases := []struct{ json, key string }{
		{`{"rootz": []}`, `"rootz"`},
		{`{"policy": {"mode": "ask", "extra": 1}}`, `"policy.extra"`},
		{`{"policy": {"mode": "yolo"}}`, `"policy.mode"`},
		{`{"roots": ["relative/dir"]}`, `"roots[0]"`},
		{`{"mcp_addr": "0.0.0.0:3000"}`, `"mcp_addr"`},
		{`{"panel_addr": "nonsense"}`, `"panel_addr"`},
		{`{"dispatch_inline_budget_ms": -1}`, `"dispatch_inline_budget_ms"`},
		{`{"max_concurrent_exec": "many"}`, `"max_concurrent_exec"`},
		{`{"exec_timeout_ms": 5000, "max_exec_timeout_ms": 1000}`, `"exec_timeout_ms"`},
		{`{"max_sessions": 0}`, `"max_sessions"`},
		{`{"max_sessions": 65}`, `"max_sessions"`},
		{`{"session_idle_timeout_ms": 999}`, `"session_idle_timeout_ms"`},
		{`{"session_buffer_bytes": 4095}`, `"session_buffer_bytes"`},
		{`{"session_transcript_bytes": 1023}`, `"session_transcript_bytes"`},
		{`{"wake": {"armed": "yes"}}`, `"wake.armed"`},
		{`{"wake": {"browser_path": "chrome"}}`, `"wake.browser_path"`},
		{`{"wake": {"debounce_ms": -1}}`, `"wake.debounce_ms"`},
		{`{"wake": {"quiet_ms": 86400001}}`, `"wake.quiet_ms"`},
		{`{"wake": {"cooldown_ms": -5}}`, `"wake.cooldown_ms"`},
		{`{"wake": {"max_attempts": 0}}`, `"wake.max_attempts"`},
		{`{"wake": {"max_attempts": 101}}`, `"wake.max_attempts"`},
		{`{"wake": {"probe_ttl_ms": 999}}`, `"wake.probe_ttl_ms"`},
		{`{"wake": {"port": 9222}}`, `"wake.port"`},
		{`[1,2]`, ""},
	}
	for _, tc := range cases {
		_, err := Parse("config.json", []byte(tc.json))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: want *Error, got %v", tc.json, err)
			continue
		}
		if tc.key != "" && !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: error %q does not name %s", tc.json, err, tc.key)
		}
	}
}

func TestParseAcceptsPartialConfig(t *testing.T) {
	c, err := Parse("c", []byte(`{"policy": {"mode": "read-only"}, "roots": ["/srv"], "mcp_addr": "[::1]:4000"}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy.Mode != ModeReadOnly || c.Roots[0] != "/srv" || c.MaxOutputBytes != Default().MaxOutputBytes {
		t.Fatalf("%+v", c)
	}
}

func TestWakeDefaultsSurviveAPartialBlock(t *testing.T) {
	c, err := Parse("c", []byte(`{"wake": {"armed": true, "debounce_ms": 0}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultWake()
	want.Armed, want.DebounceMS = true, 0
	if c.Wake != want {
		t.Fatalf("wake = %+v, want %+v", c.Wake, want)
	}
	if Default().Wake.Armed {
		t.Fatal("wake is armed by default")
	}
}

func TestDataDirAndPath(t *testing.T) {
	t.Setenv("HEARTH_HOME", "/x/hearth-home")
	d, err := DataDir()
	if err != nil || d != "/x/hearth-home" {
		t.Fatalf("%q %v", d, err)
	}
	t.Setenv("HEARTH_CONFIG", "")
	if p := Path(d); p != filepath.Join(d, "config.json") {
		t.Fatal(p)
	}
	t.Setenv("HEARTH_CONFIG", "/etc/h.json")
	if p := Path(d); p != "/etc/h.json" {
		t.Fatal(p)
	}
}

func TestTunnelDefaultsAndRefusals(t *testing.T) {
	c, err := Parse("config.json", []byte(`{"tunnel": {"tunnel_id": "tunnel_0123456789abcdef0123456789abcdef"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Tunnel.Profile != DefaultTunnelProfile || c.Tunnel.Autostart || c.Tunnel.ClientPath != "" {
		t.Errorf("tunnel defaults not kept beside a partial object: %+v", c.Tunnel)
	}
	if c.Tunnel.TunnelID != "tunnel_0123456789abcdef0123456789abcdef" {
		t.Errorf("tunnel_id = %q", c.Tunnel.TunnelID)
	}
	if d := Default().Tunnel; d != (Tunnel{Profile: "hearth-local"}) {
		t.Errorf("default tunnel = %+v", d)
	}
	absClient := strconv.Quote(filepath.Join(t.TempDir(), "tunnel-client"))
	cases := []struct{ json, key string }{
		{`{"tunnel": {"key": "sk-123"}}`, `"tunnel.key"`},
		{`{"tunnel": {"autostart": "yes"}}`, `"tunnel.autostart"`},
		{`{"tunnel": {"client_path": "tunnel-client"}}`, `"tunnel.client_path"`},
		{`{"tunnel": {"client_sha256": "abc"}}`, `"tunnel.client_sha256"`},
		{`{"tunnel": {"client_path": ` + absClient + `, "client_sha256": "` + strings.Repeat("A", 64) + `"}}`, `"tunnel.client_sha256"`},
		{`{"tunnel": {"client_sha256": "` + strings.Repeat("a", 64) + `"}}`, `"tunnel.client_sha256"`},
		{`{"tunnel": {"tunnel_id": "--help"}}`, `"tunnel.tunnel_id"`},
		{`{"tunnel": {"tunnel_id": "tunnel_a b"}}`, `"tunnel.tunnel_id"`},
		{`{"tunnel": {"tunnel_id": "0123"}}`, `"tunnel.tunnel_id"`},
		{`{"tunnel": {"profile": ""}}`, `"tunnel.profile"`},
		{`{"tunnel": {"profile": "-x"}}`, `"tunnel.profile"`},
		{`{"tunnel": {"profile": "../up"}}`, `"tunnel.profile"`},
		{`{"tunnel": []}`, `"tunnel"`},
	}
	for _, tc := range cases {
		_, err := Parse("config.json", []byte(tc.json))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: want *Error, got %v", tc.json, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: error %q does not name %s", tc.json, err, tc.key)
		}
	}
}

func TestTunnelRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	c := Default()
	c.Tunnel = Tunnel{ClientPath: filepath.Join(t.TempDir(), "tunnel-client"), ClientSHA256: strings.Repeat("0f", 32),
		TunnelID: "tunnel_abc", Profile: "mine", Autostart: true}
	if err := Write(path, c); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tunnel != c.Tunnel {
		t.Errorf("tunnel after round trip = %+v, want %+v", got.Tunnel, c.Tunnel)
	}
}

func TestRetentionKeys(t *testing.T) {
	d := Default()
	if d.ArtifactRetentionDays != 30 || d.ReceiptRetentionDays != 30 {
		t.Fatalf("retention defaults: %d, %d", d.ArtifactRetentionDays, d.ReceiptRetentionDays)
	}
	c, err := Parse("c", []byte(`{"artifact_retention_days": 0, "receipt_retention_days": 7}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.ArtifactRetentionDays != 0 || c.ReceiptRetentionDays != 7 {
		t.Fatalf("0 (keep forever) and 7 must be kept: %+v", c)
	}
	for _, tc := range []struct{ json, key string }{
		{`{"artifact_retention_days": -1}`, `"artifact_retention_days"`},
		{`{"receipt_retention_days": -5}`, `"receipt_retention_days"`},
		{`{"receipt_retention_days": 36501}`, `"receipt_retention_days"`},
		{`{"artifact_retention_days": "30"}`, `"artifact_retention_days"`},
		{`{"artifact_retention_days": 1.5}`, `"artifact_retention_days"`},
	} {
		_, err := Parse("config.json", []byte(tc.json))
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: error %v does not name %s", tc.json, err, tc.key)
		}
	}
}
