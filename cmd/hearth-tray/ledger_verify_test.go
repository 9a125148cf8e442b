//go:build !windows

package main

import (
	"regexp"
	"strconv"
	"testing"

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
		if r := c.Call("machine", map[string]any{"operation": "exec", "command": "echo", "args": []string{"journaled"}}); r.State() != "completed" {
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
