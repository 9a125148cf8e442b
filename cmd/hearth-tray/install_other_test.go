//go:build !windows

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestInstallIsWindowsOnly: off Windows install and uninstall refuse with
// a message that says what to do instead, and touch nothing.
func TestInstallIsWindowsOnly(t *testing.T) {
	t.Setenv("HEARTH_HOME", t.TempDir())
	for _, args := range [][]string{{"install"}, {"uninstall"}, {"uninstall", "--purge"}} {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "is for Windows; on Linux") || !strings.Contains(err.Error(), "hearth-tray serve") {
			t.Errorf("%v: %v", args, err)
		}
		if out.Len() != 0 {
			t.Errorf("%v printed %q", args, out.String())
		}
	}
	var out, errb bytes.Buffer
	if _, ok := run(context.Background(), []string{"uninstall", "--wipe"}, &out, &errb).(usageError); !ok {
		t.Error("an unknown flag must be a usage error")
	}
	if _, ok := run(context.Background(), []string{"ensure", "now"}, &out, &errb).(usageError); !ok {
		t.Error("an argument to ensure must be a usage error")
	}
}
