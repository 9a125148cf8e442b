package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/instance"
)

// TestEnsureHome: `ensure --home DIR` (what the selftest's copy of the
// logon task runs, since Task Scheduler sets no environment) starts the
// Hearth of DIR, with DIR's config, whatever HEARTH_HOME says; the other
// data directory is not touched.
func TestEnsureHome(t *testing.T) {
	home, decoy := t.TempDir(), t.TempDir()
	cfg := config.Default()
	cfg.MCPAddr, cfg.PanelAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Roots = []string{t.TempDir()}
	if err := config.Write(filepath.Join(home, "config.json"), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopInstance(t, home) })
	var b bytes.Buffer
	cmd := asMain(decoy, "ensure", "--home", home)
	// What ensure starts counts itself in HEARTH_HOME's startsFile.
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Run(); err != nil || !startedRE.MatchString(b.String()) {
		t.Fatalf("ensure --home: %v %q", err, b.String())
	}
	info, err := instance.ReadInfo(home)
	if err != nil || info.PID == 0 {
		t.Fatalf("instance.json in --home: %+v %v", info, err)
	}
	if starts := readStarts(t, home); len(starts) != 1 || starts[0] != info.PID {
		t.Fatalf("processes started on --home: %v, want [%d]", starts, info.PID)
	}
	entries, err := os.ReadDir(decoy)
	if err != nil || len(entries) != 0 {
		t.Fatalf("HEARTH_HOME's directory was touched: %v %v", entries, err)
	}
	stopInstance(t, home)
	if _, err := os.Stat(filepath.Join(home, instance.InfoFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("instance.json after a clean stop: %v", err)
	}
	b.Reset()
	cmd = asMain(decoy, "ensure", "--home")
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Run(); err == nil || !strings.Contains(b.String(), "home") {
		t.Fatalf("--home without a directory must be refused naming the flag: %v %q", err, b.String())
	}
}
