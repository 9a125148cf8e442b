package config

import (
	"errors"
	"os"
	"path/filepath"
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
		{`{"wake": {"armed": "yes"}}`, `"wake.armed"`},
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
