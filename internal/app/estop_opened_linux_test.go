package app_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestEStopKillsAppsHearthOpened: an app ui.open started itself (a
// .desktop entry's program, which Hearth starts in a session of its own
// and reaps, so it is never adopted) is killed by the e-stop with the
// child it started, as an app xdg-open detached is (Hearth adopts that
// one, TestEStopKillsWhatLeftTheTree).
func TestEStopKillsAppsHearthOpened(t *testing.T) {
	base := t.TempDir()
	pidsFile := filepath.Join(base, "pids")
	app := filepath.Join(base, "notes-app")
	// The app starts a child, writes both pids, and waits for the child.
	script := "#!/bin/sh\nsleep 600 &\necho $$ $! > " + pidsFile + ".tmp && mv " + pidsFile + ".tmp " + pidsFile + "\nwait\n"
	if err := os.WriteFile(app, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	apps := filepath.Join(base, "share", "applications")
	if err := os.MkdirAll(apps, 0o700); err != nil {
		t.Fatal(err)
	}
	entry := "[Desktop Entry]\nType=Application\nName=Notes Test App\nExec=" + app + " %F\n"
	if err := os.WriteFile(filepath.Join(apps, "org.example.NotesTest.desktop"), []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "share"))
	t.Setenv("XDG_DATA_DIRS", filepath.Join(base, "none"))
	hearthtest.FakeOpener(t)

	in := hearthtest.Start(t, hearthtest.Trusted)
	c := hearthtest.Connect(t, in.URL, "estop-opened")
	if r := c.Final("ui", map[string]any{"operation": "open", "app": "Notes Test App"}); r.State() != "completed" {
		t.Fatalf("ui.open of the app: %s", r.Raw)
	}

	var pids []int
	for deadline := time.Now().Add(20 * time.Second); len(pids) == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidsFile); err == nil {
			for _, f := range strings.Fields(string(b)) {
				pid, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("pids file: %q", b)
				}
				pids = append(pids, pid)
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the opened app never wrote its pids")
		}
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if len(pids) != 2 || !running(pids[0]) || !running(pids[1]) {
		t.Fatalf("the app and its child (%v) must run before the e-stop", pids)
	}

	if err := in.App.Operator.EStop(t.Context(), "alice", "test"); err != nil {
		t.Fatal(err)
	}
	// A generous deadline for a loaded machine; Hearth kills them at once.
	deadline := time.Now().Add(20 * time.Second)
	for _, pid := range pids {
		for running(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d (of the app and its child %v) still runs after the e-stop", pid, pids)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
