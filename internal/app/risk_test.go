package app_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/risk"
)

// TestEveryPrimitiveHasARiskRow: the risk table and the registry agree —
// a registered primitive without a row (or a row for none) fails here —
// and every tool description says what the table decides for the mode.
func TestEveryPrimitiveHasARiskRow(t *testing.T) {
	in := hearthtest.Start(t, nil)
	var names []string
	for _, s := range in.App.Registry.All() {
		names = append(names, s.Name())
	}
	if err := risk.Check(names); err != nil {
		t.Fatal(err)
	}
	c := hearthtest.Connect(t, in.URL, "risk-rows")
	res, err := c.Session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		var own []string
		for _, n := range names {
			if strings.HasPrefix(n, tl.Name+".") {
				own = append(own, n)
			}
		}
		if len(own) == 0 {
			t.Errorf("tool %s has no primitives", tl.Name)
		}
		if line := risk.ModelLine("ask", own); !strings.Contains(tl.Description, line) {
			t.Errorf("tool %s does not say what ask mode does:\n%s", tl.Name, tl.Description)
		}
	}
}

// TestConfigModeIsTheModeAtStart: config.json's mode is the one in force
// at start, whatever an earlier run kept in the database (an older Hearth
// kept the panel's choice only there, so doctor and host_info disagreed).
func TestConfigModeIsTheModeAtStart(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	in := hearthtest.StartHome(t, home, nil)
	if err := in.App.Operator.SetPolicy(ctx, "ada", "trusted"); err != nil {
		t.Fatal(err)
	}
	in.Stop()
	cfgPath := filepath.Join(home, "config.json")
	c, err := config.Load(cfgPath)
	if err != nil || c.Policy.Mode != "trusted" {
		t.Fatalf("the panel's mode is not in config.json: %v %q", err, c.Policy.Mode)
	}
	c.Policy.Mode = "ask" // edited by hand while Hearth was stopped
	if err := config.Write(cfgPath, c); err != nil {
		t.Fatal(err)
	}
	in = hearthtest.StartHome(t, home, nil)
	st, err := in.App.Gov.Status(ctx)
	if err != nil || st.Mode != "ask" {
		t.Fatalf("mode at start = %q (%v), config.json says ask", st.Mode, err)
	}
}
