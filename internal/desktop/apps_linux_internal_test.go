//go:build linux

package desktop

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/primitive"
	"github.com/hearth-dev/hearth/internal/proc"
)

// TestAppsAreReadOncePerCall: one ui.open of an app, through the three
// places a governed call reads its input (the input check, the question
// governance asks of the target, the run), reads the installed apps once;
// a ui.apps after it reads them not at all while their folder is as it
// was; a .desktop entry added, or one rewritten, is read at the next call.
// The readings are counted around the real listing of .desktop entries.
func TestAppsAreReadOncePerCall(t *testing.T) {
	base := t.TempDir()
	apps := filepath.Join(base, "share", "applications")
	if err := os.MkdirAll(apps, 0o700); err != nil {
		t.Fatal(err)
	}
	started := filepath.Join(base, "started")
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(apps, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("org.example.Editor.desktop", "[Desktop Entry]\nType=Application\nName=Text Editor\nName[de]=Texteditor\nExec=sh -c \"echo started >>"+started+"\" %F\n")
	t.Setenv("XDG_DATA_HOME", filepath.Join(base, "share"))
	t.Setenv("XDG_DATA_DIRS", filepath.Join(base, "none"))
	t.Setenv("LC_ALL", "de_DE.UTF-8")
	roots, err := fsops.NewRoots([]string{base}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(roots, func(string) bool { return false }, proc.NewStarted(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	readings := 0
	s.apps.list = func() ([]App, error) { readings++; return listApps() }
	specs := map[string]*primitive.Spec{}
	for _, sp := range s.Specs() {
		specs[sp.Operation] = sp
	}
	ctx := context.Background()

	raw := json.RawMessage(`{"app":"Texteditor"}`)
	open := specs["open"]
	if err := open.Precheck(raw); err != nil {
		t.Fatalf("precheck: %v", err)
	}
	tgt, err := open.Target(ctx, "route", raw)
	if err != nil || tgt.App != "sh" {
		t.Fatalf("target %+v, %v; want the app sh", tgt, err)
	}
	if _, err := open.Run(ctx, &primitive.Call{}, raw); err != nil {
		t.Fatalf("run: %v", err)
	}
	if readings != 1 {
		t.Fatalf("one ui.open of an app read the installed apps %d times, want 1", readings)
	}

	list := func() []string {
		t.Helper()
		res, err := specs["apps"].Run(ctx, &primitive.Call{}, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, a := range res.(*AppList).Apps {
			names = append(names, a.Name)
		}
		return names
	}
	if got := list(); len(got) != 1 || got[0] != "Texteditor" || readings != 1 {
		t.Fatalf("ui.apps after it listed %q with %d readings in all, want [Texteditor] and no new reading", got, readings)
	}

	write("org.example.Paint.desktop", "[Desktop Entry]\nType=Application\nName=Paint\nExec=true\n")
	if got := list(); len(got) != 2 || got[1] != "Texteditor" || readings != 2 {
		t.Fatalf("after an entry was added ui.apps listed %q with %d readings in all, want [Paint Texteditor] and one new reading", got, readings)
	}
	// Rewritten in place, the same size, a moment later: its time tells.
	time.Sleep(10 * time.Millisecond)
	write("org.example.Paint.desktop", "[Desktop Entry]\nType=Application\nName=Draws\nExec=true\n")
	if got := list(); len(got) != 2 || got[0] != "Draws" || readings != 3 {
		t.Fatalf("after an entry was rewritten ui.apps listed %q with %d readings in all, want [Draws Texteditor] and one new reading", got, readings)
	}
}
