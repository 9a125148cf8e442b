//go:build !windows

package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/backup"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

var backedUpRE = regexp.MustCompile(`Backed up and verified: (\S+) \((\d+) ledger entries`)

// TestBackupAndRestoreCLI: hearth-tray backup works while Hearth runs,
// restore is refused then, doctor names the newest verified backup, and
// restore by the name backup --list prints works once Hearth stopped.
func TestBackupAndRestoreCLI(t *testing.T) {
	home := freshHome(t)
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
	out, _ = doctorCLI(t, home)
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
