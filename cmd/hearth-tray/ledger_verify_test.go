//go:build !windows

package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

var verifyLine = regexp.MustCompile(`ledger OK: (\d+) entries; the newest checkpoint covers (\d+), (\d+) came after it`)

// verifyLedger runs `ledger verify` on home and returns the entries, the
// newest checkpoint's size and the entries after it.
func verifyLedger(t *testing.T, home, when string) (entries, covered, after int) {
	t.Helper()
	out, err := runCLI(t, home, "", "ledger", "verify")
	m := verifyLine.FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("ledger verify %s: %v %s", when, err, out)
	}
	entries, _ = strconv.Atoi(m[1])
	covered, _ = strconv.Atoi(m[2])
	after, _ = strconv.Atoi(m[3])
	if covered+after != entries {
		t.Fatalf("ledger verify %s: %d covered + %d after != %d entries", when, covered, after, entries)
	}
	return entries, covered, after
}

// TestLedgerVerifiesRightAfterStartAndCrash: start-up signs a checkpoint,
// so the ledger of a fresh install verifies at once, and so does one whose
// Hearth was killed before any periodic checkpoint (its newer entries are
// reported as after the checkpoint); the next start signs them.
func TestLedgerVerifiesRightAfterStartAndCrash(t *testing.T) {
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, hearthtest.Trusted)
	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "verify")
	// A call answers only once start-up, and its checkpoint, is done.
	if r := c.Call("machine", map[string]any{"operation": "host_info"}); r.State() != "completed" {
		t.Fatalf("host_info: %s", r.Raw)
	}
	verifyLedger(t, home, "on a fresh install")

	for range 3 {
		if r := c.Final("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"journaled"}}); r.State() != "completed" {
			t.Fatalf("exec: %s", r.Raw)
		}
	}
	p.Kill()
	entries, covered, after := verifyLedger(t, home, "after a crash")
	if after == 0 || entries == 0 {
		t.Fatalf("after a crash: %d entries, %d after the checkpoint; want the exec calls journaled after it", entries, after)
	}

	p = hearthtest.StartProcess(t, home)
	c = hearthtest.Connect(t, p.URL, "verify")
	if r := c.Call("machine", map[string]any{"operation": "host_info"}); r.State() != "completed" {
		t.Fatalf("host_info after restart: %s", r.Raw)
	}
	entries2, covered2, _ := verifyLedger(t, home, "after the restart")
	if covered2 < entries || covered2 <= covered || entries2 < entries {
		t.Fatalf("after the restart the checkpoint covers %d of %d entries; want at least the %d journaled before the crash", covered2, entries2, entries)
	}
}

// TestLedgerVerifyEvidenceFromStdin: a conversation's evidence, read over
// MCP as a resource, verifies with `ledger verify -` from standard input
// and no database (another home); an altered copy fails, naming the entry.
func TestLedgerVerifyEvidenceFromStdin(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.Roots = []string{root} })
	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "stdin")
	w := c.Final("fs", map[string]any{"operation": "write", "path": filepath.Join(root, "f.txt"), "data": "x"})
	if w.State() != "completed" {
		t.Fatalf("fs.write: %s", w.Raw)
	}
	meta := mcp.Meta{"hearth/conversation": "stdin"}
	list, err := c.Session.ListResources(context.Background(), &mcp.ListResourcesParams{Meta: meta})
	if err != nil || len(list.Resources) == 0 {
		t.Fatalf("resources/list: %v", err)
	}
	res, err := c.Session.ReadResource(context.Background(), &mcp.ReadResourceParams{Meta: meta, URI: list.Resources[0].URI})
	if err != nil {
		t.Fatalf("resources/read: %v", err)
	}
	bundle := res.Contents[0].Text
	if !strings.Contains(bundle, w.Str("command_id")) {
		t.Fatalf("the evidence lacks the write's command: %s", bundle)
	}
	out, err := runCLI(t, t.TempDir(), bundle, "ledger", "verify", "-")
	if err != nil || !strings.Contains(out, "evidence OK: ") || !strings.Contains(out, "(conversation ") {
		t.Fatalf("ledger verify -: %v %s", err, out)
	}
	altered := strings.Replace(bundle, `\"outcome\":\"receipt\"`, `\"outcome\":\"unknown\"`, 1)
	if altered == bundle {
		t.Fatalf("no receipt outcome to alter: %s", bundle)
	}
	out, err = runCLI(t, t.TempDir(), altered, "ledger", "verify", "-")
	if err == nil || !strings.Contains(out, "inclusion proof does not lead to the checkpoint root") {
		t.Fatalf("ledger verify - of an altered copy: %v %s", err, out)
	}
}
