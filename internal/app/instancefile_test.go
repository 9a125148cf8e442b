package app_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/instance"
)

// TestFailedStartLeavesNoInstanceFile: no failed start leaves an
// instance.json behind — neither one it wrote itself (the start is cut
// short after publishing it), nor one of a run that was killed before it
// stopped (the start fails before publishing its own); and a start refused
// because another Hearth runs leaves that one's file alone.
func TestFailedStartLeavesNoInstanceFile(t *testing.T) {
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.Roots = []string{t.TempDir()} })
	o := app.Options{DataDir: home, ConfigPath: filepath.Join(home, "config.json"), MCPAddr: "127.0.0.1:0", PanelAddr: "127.0.0.1:0", Version: "test", Instance: true}
	gone := func(when string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(home, instance.InfoFile)); !errors.Is(err, fs.ErrNotExist) {
			info, _ := instance.ReadInfo(home)
			t.Fatalf("%s: instance.json is still there (%+v, stat: %v)", when, info, err)
		}
	}

	// Cut short after instance.json is published: the start's context
	// ends once both listeners are bound.
	ctx, cancel := context.WithCancel(context.Background())
	cut := o
	cut.Listening = func(*app.App) error { cancel(); return nil }
	if h, err := app.Start(ctx, cut); err == nil {
		h.Stop()
		t.Fatal("a start whose context ended before it served succeeded")
	} else if !errors.Is(err, context.Canceled) {
		t.Fatalf("a start cut short: %v, want context.Canceled", err)
	}
	gone("after a start cut short once published")

	// A killed run's instance.json (its process is gone), then a start
	// that fails before publishing its own.
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := instance.WriteInfo(home, instance.Info{PID: dead.ProcessState.Pid(), MCPURL: "http://127.0.0.1:1/mcp", PanelURL: "http://127.0.0.1:1/"}); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("control endpoint refused")
	failing := o
	failing.Listening = func(*app.App) error { return refused }
	if _, err := app.Start(context.Background(), failing); !errors.Is(err, refused) {
		t.Fatalf("Start with a failing Listening: %v", err)
	}
	gone("after a failed start over a killed run's instance.json")

	// A live Hearth's file survives a second start refused beside it, and
	// goes when it stops.
	h, err := app.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Start(context.Background(), o); !errors.Is(err, instance.ErrAlreadyRunning) {
		t.Fatalf("second Start: %v, want instance.ErrAlreadyRunning", err)
	}
	if info, err := instance.ReadInfo(home); err != nil || info.PID != os.Getpid() || info.MCPURL != h.MCPURL() {
		t.Fatalf("the running Hearth's instance.json after a refused second start: %+v (%v)", info, err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	gone("after Stop")
}
