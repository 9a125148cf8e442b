package app_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/instance"
)

// TestStartIsOneHearthPerDataDirectory: Start with Instance takes the
// instance lock and publishes instance.json once listening; a second Start
// on the same data directory gets instance.ErrAlreadyRunning; a Listening
// that fails ends the start with its error and releases the lock, and after
// Stop the next Start works.
func TestStartIsOneHearthPerDataDirectory(t *testing.T) {
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.Roots = []string{t.TempDir()} })
	o := app.Options{DataDir: home, ConfigPath: filepath.Join(home, "config.json"), MCPAddr: "127.0.0.1:0", PanelAddr: "127.0.0.1:0", Version: "test", Instance: true}
	ctx := context.Background()

	var listening string
	first := o
	first.Listening = func(a *app.App) error {
		if _, err := instance.ReadInfo(home); err == nil {
			t.Error("instance.json was published before Listening ran")
		}
		listening = a.MCPURL()
		return nil
	}
	h, err := app.Start(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	info, err := instance.ReadInfo(home)
	if err != nil || info.MCPURL != h.MCPURL() || listening != h.MCPURL() {
		t.Fatalf("instance.json %+v (%v), Listening saw %q, serving at %s", info, err, listening, h.MCPURL())
	}
	c := hearthtest.Connect(t, h.MCPURL(), "start")
	if st, r := c.Settled("machine", map[string]any{"operation": "host_info"}); st != "completed" {
		t.Fatalf("host_info: %s %s", st, r.Raw)
	}
	if _, err := app.Start(ctx, o); !errors.Is(err, instance.ErrAlreadyRunning) {
		t.Fatalf("second Start: %v, want instance.ErrAlreadyRunning", err)
	}
	c.Session.Close()
	if err := h.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}

	refused := errors.New("control endpoint refused")
	failing := o
	failing.Listening = func(*app.App) error { return refused }
	if _, err := app.Start(ctx, failing); !errors.Is(err, refused) {
		t.Fatalf("Start with a failing Listening: %v", err)
	}
	h, err = app.Start(ctx, o)
	if err != nil {
		t.Fatalf("Start after Stop and a failed start: %v", err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
}
