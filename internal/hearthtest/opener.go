package hearthtest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// FakeOpener puts a fake xdg-open first on PATH for the rest of the test
// and returns the file it appends each opened path or address to, one a
// line. Tests that drive every primitive (ui.open among them) use it so a
// call that really runs opens nothing on the PC running the tests. Off
// Linux and the BSDs it does nothing and returns "" (ui.open does not use
// xdg-open there). A path or address containing "xdg-open-fails" fails
// as xdg-open does when no application takes it (exit 4, a message on
// stderr), so the failure path can be tested too. It uses t.Setenv, so
// the test must not be parallel.
func FakeOpener(t testing.TB) string {
	t.Helper()
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		return ""
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "opened.log")
	script := "#!/bin/sh\n# A fake xdg-open for tests: it records what it was asked to open.\n" +
		"case \"$1\" in *xdg-open-fails*) echo \"no application for $1\" >&2; exit 4;; esac\n" +
		"printf '%s\\n' \"$1\" >>\"$FAKE_XDG_OPEN_LOG\"\n"
	if err := os.WriteFile(filepath.Join(dir, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatalf("fake xdg-open: %v", err)
	}
	t.Setenv("FAKE_XDG_OPEN_LOG", log)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}
