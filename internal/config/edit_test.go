package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetStringsKeepsTheRestOfTheFile: the user's own file (a comment-free
// but hand-formatted one, keys in their order, a key left at its default
// by omission) keeps every byte but the value that changes.
func TestSetStringsKeepsTheRestOfTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	orig := "{\n\t\"policy\": {\"mode\": \"trusted\"},\n\t\"mcp_addr\":   \"127.0.0.1:3000\" ,\n\t\"roots\": [\"/tmp\"],\n\t\"panel_addr\": \"localhost:3001\"\n}\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := SetStrings(path, map[string]string{"mcp_addr": "127.0.0.1:49152", "panel_addr": "localhost:49153"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := strings.NewReplacer(`"127.0.0.1:3000"`, `"127.0.0.1:49152"`, `"localhost:3001"`, `"localhost:49153"`).Replace(orig)
	if string(b) != want {
		t.Fatalf("file after SetStrings:\n%s\nwant:\n%s", b, want)
	}
	c, err := Load(path)
	if err != nil || c.MCPAddr != "127.0.0.1:49152" || c.PanelAddr != "localhost:49153" || c.Policy.Mode != ModeTrusted {
		t.Fatalf("reload: %v %+v", err, c)
	}
	if st, _ := os.Stat(path); st.Mode().Perm()&0o077 != 0 {
		t.Errorf("config file mode %v is readable by others", st.Mode())
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("a temporary file was left beside the config: %v", ents)
	}
}

// TestSetStringsAddsAMissingKey: a file without the key (the default
// applied by omission) gets it, and stays valid JSON, also when empty.
func TestSetStringsAddsAMissingKey(t *testing.T) {
	for _, orig := range []string{`{"roots": []}`, `{}`, "{\n}\n"} {
		path := filepath.Join(t.TempDir(), "config.json")
		os.WriteFile(path, []byte(orig), 0o600)
		if err := SetStrings(path, map[string]string{"panel_addr": "127.0.0.1:40001"}); err != nil {
			t.Fatalf("%s: %v", orig, err)
		}
		c, err := Load(path)
		if err != nil || c.PanelAddr != "127.0.0.1:40001" || c.MCPAddr != "127.0.0.1:3000" {
			t.Fatalf("%s: reload: %v %+v", orig, err, c)
		}
	}
}

// TestSetStringsRefusesWithoutWriting: an unknown key or a value that
// would not load is refused, naming it, and the file is left as it was.
func TestSetStringsRefusesWithoutWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	orig := `{"mcp_addr": "127.0.0.1:3000"}`
	os.WriteFile(path, []byte(orig), 0o600)
	for _, v := range []map[string]string{{"mcp_adr": "127.0.0.1:1"}, {"mcp_addr": "0.0.0.0:3000"}} {
		err := SetStrings(path, v)
		var ce *Error
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "mcp_ad") {
			t.Fatalf("%v: want an error naming the key, got %v", v, err)
		}
		if b, _ := os.ReadFile(path); string(b) != orig {
			t.Fatalf("%v: the file changed: %s", v, b)
		}
	}
}
