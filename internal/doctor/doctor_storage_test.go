//go:build !windows

package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/fsops"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestDoctorStorage: doctor shows the space undo copies and artifacts take
// and the budget, and warns once they pass it.
func TestDoctorStorage(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	addrs := freeAddrs(t, 2)
	hearthtest.WriteConfig(t, home, func(c *config.Config) {
		c.MCPAddr, c.PanelAddr, c.Roots = addrs[0], addrs[1], []string{root}
	})
	in := hearthtest.StartHome(t, home, nil)
	p := filepath.Join(root, "f.txt")
	for _, data := range []string{"12345", "x"} {
		if _, err := in.App.FS.Write(context.Background(), "r:doctor", fsops.WriteInput{Path: p, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	in.Stop()
	out, code := doctorCLI(t, home)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	wantLine(t, out, "ok    storage: undo copies 5 B + artifacts 0 B = 5 B of 1.0 GiB (0%)")

	cfg, err := config.Load(config.Path(home))
	if err != nil {
		t.Fatal(err)
	}
	cfg.StorageBudgetBytes = 4
	if err := config.Write(config.Path(home), cfg); err != nil {
		t.Fatal(err)
	}
	out, _ = doctorCLI(t, home)
	if !strings.Contains(out, "warn  storage: undo copies 5 B + artifacts 0 B = 5 B of 4 B (125%); over storage_budget_bytes") {
		t.Fatalf("over the budget is not a warning:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, "hearth.db")); err != nil {
		t.Fatal(err)
	}
}
