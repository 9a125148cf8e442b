package desktop

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/autostart"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/proc"
)

// TestAppsAreReadAgainOnlyWhenTheStartMenuChanges: on Windows the Start
// menu's shortcuts are read once (each is resolved through the shell) and
// not again while the Programs folders are as they were; a shortcut added
// to the user's Programs folder is read, and listed, at the next call.
func TestAppsAreReadAgainOnlyWhenTheStartMenuChanges(t *testing.T) {
	programs, err := windows.KnownFolderPath(windows.FOLDERID_Programs, 0)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := fsops.NewRoots([]string{t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(roots, func(string) bool { return false }, proc.NewStarted(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	readings := 0
	s.apps.list = func() ([]App, error) { readings++; return listApps() }
	names := func() []string {
		t.Helper()
		l, err := s.Apps(context.Background(), "", MaxApps)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range l.Apps {
			out = append(out, a.Name)
		}
		return out
	}
	names()
	names()
	if readings != 1 {
		t.Fatalf("two ui.apps calls read the Start menu %d times, want 1", readings)
	}
	name := fmt.Sprintf("Hearth cache test %d", os.Getpid())
	lnk := filepath.Join(programs, name+".lnk")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := autostart.CreateShortcut(lnk, exe, filepath.Dir(exe), "Hearth test"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(lnk) })
	if got := names(); !slices.Contains(got, name) || readings != 2 {
		t.Fatalf("after a shortcut was added ui.apps listed %q with %d readings in all, want %q and one new reading", got, readings, name)
	}
}
