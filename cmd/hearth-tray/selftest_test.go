package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/selftestreport"
)

// TestSelftestCommand runs `hearth-tray selftest --report FILE` as main
// does: one line per check, no FAIL here, the report saved in the data
// directory and copied to FILE; a stray argument is a usage error. On
// Windows scripts/test-windows runs the built exe's selftest instead (a
// test binary must not be what a real Task Scheduler starts).
func TestSelftestCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("scripts/test-windows runs hearth-tray.exe selftest itself")
	}
	home := t.TempDir()
	t.Setenv("HEARTH_HOME", home)
	t.Setenv("HEARTH_CONFIG", "")
	out := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"selftest", "--report", out}, &stdout, &stderr); err != nil {
		t.Fatalf("selftest: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"ok      hearth.start", "skipped uia.available", "ok      cleanup", " FAIL, "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	for _, p := range []string{filepath.Join(home, selftestreport.FileName), out} {
		rep, err := selftestreport.Read(p)
		if err != nil || rep.Counts.Fail != 0 || rep.Counts.OK == 0 {
			t.Fatalf("report %s: %+v %v", p, rep, err)
		}
	}
	err := run(context.Background(), []string{"selftest", "extra"}, &stdout, &stderr)
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "extra") {
		t.Fatalf("a stray argument: %v", err)
	}
}
