//go:build !windows

package main

import (
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/backup"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

var backedUpRE = regexp.MustCompile(`Backed up and verified: (\S+) \((\d+) ledger entries`)

// TestBackupAndRestoreCLI: hearth-tray backup works while Hearth runs,
// restore is refused then, doctor names the newest verified backup, and
// restore by the name backup --list prints works once Hearth stopped.
func TestBackupAndRestoreCLI(t *testing.T) {
	home := t.TempDir()
	addrs := freeAddrs(t, 2)
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.MCPAddr, c.PanelAddr = addrs[0], addrs[1] })
	p := hearthtest.StartProcess(t, home)
	c := hearthtest.Connect(t, p.URL, "backup")
	if r := c.Call("machine", map[string]any{"operation": "host_info"}); r.State() != "completed" {
		t.Fatalf("%s", r.Raw)
	}
	out, err := runCLI(t, home, "", "backup")
	m := backedUpRE.FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("backup while Hearth runs: %v\n%s", err, out)
	}
	file := m[1]
	if filepath.Dir(file) != backup.Dir(home) || !strings.HasSuffix(file, "-manual.db") {
		t.Fatalf("backup made %s, want a manual backup in %s", file, backup.Dir(home))
	}
	out, err = runCLI(t, home, "", "restore", file)
	if err == nil || !strings.Contains(out, "Hearth is running") {
		t.Fatalf("restore while Hearth runs: %v\n%s", err, out)
	}
	out, _ = runCLI(t, home, "", "doctor")
	if !regexp.MustCompile(`(?m)^ok    backups: newest verified backup `).MatchString(out) {
		t.Fatalf("doctor does not name a verified backup:\n%s", out)
	}
	if err := p.Interrupt(t); err != nil {
		t.Fatalf("serve exit: %v\n%s", err, p.Stderr)
	}

	out, err = runCLI(t, home, "", "backup", "--list")
	if err != nil || !strings.Contains(out, filepath.Base(file)) {
		t.Fatalf("backup --list: %v\n%s", err, out)
	}
	out, err = runCLI(t, home, "", "restore", filepath.Base(file))
	if err != nil || !strings.Contains(out, "Restored "+file) || !strings.Contains(out, "The database it replaced is kept in "+filepath.Join(backup.Dir(home), "replaced-")) {
		t.Fatalf("restore by name: %v\n%s", err, out)
	}
	// The restored database serves again.
	p = hearthtest.StartProcess(t, home)
	c = hearthtest.Connect(t, p.URL, "after")
	if r := c.Call("machine", map[string]any{"operation": "host_info"}); r.State() != "completed" {
		t.Fatalf("after restore: %s", r.Raw)
	}
	if err := p.Interrupt(t); err != nil {
		t.Fatalf("serve exit: %v\n%s", err, p.Stderr)
	}
	out, err = runCLI(t, home, "", "restore", filepath.Join(home, "no-such.db"))
	if err == nil || !strings.Contains(out, "no-such.db") {
		t.Fatalf("restore of a missing file: %v\n%s", err, out)
	}
}

// freeAddrs returns n loopback addresses nothing listens on just now, for
// a config whose ports do not depend on what else runs on this machine.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, ln.Addr().String())
		ln.Close()
	}
	return addrs
}
