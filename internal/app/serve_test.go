package app_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hearth-dev/hearth/internal/app"
	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestShutdownDuringStartupIsClean: a shutdown asked for before start-up
// recovery has finished (Ctrl-C right after the listening line) ends Serve
// without an error, and the next start on the same data directory works.
func TestShutdownDuringStartupIsClean(t *testing.T) {
	home := t.TempDir()
	hearthtest.WriteConfig(t, home, func(c *config.Config) { c.Roots = []string{t.TempDir()} })
	o := app.Options{DataDir: home, ConfigPath: filepath.Join(home, "config.json"), MCPAddr: "127.0.0.1:0", PanelAddr: "127.0.0.1:0", Version: "test"}
	a, err := app.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Listen(); err != nil {
		a.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Serve(ctx); err != nil {
		t.Errorf("Serve after a shutdown during start-up: %v", err)
	}
	a.Close()

	in := hearthtest.StartHome(t, home, nil)
	c := hearthtest.Connect(t, in.URL, "after")
	if st, r := c.Settled("machine", map[string]any{"operation": "host_info"}); st != "completed" {
		t.Fatalf("the next start: %s %s", st, r.Raw)
	}
}
