//go:build !windows

package web_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestNoRuleWhileEStopped: while the emergency stop is on, neither the
// card's "Allow, and let ChatGPT change code and settings in this folder"
// nor its "Always allow" for a program stores anything — no workspace, no
// allow-rule, no approval, no lowered-safety announcement — and the page
// says so in plain words; the requests keep waiting. Once the stop is
// reset, the same folder choice adds the workspace and allows the call.
func TestNoRuleWhileEStopped(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	proj := filepath.Join(home, "code", "app")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *config.Config) {
		def := config.Default()
		c.Roots, c.Policy = def.Roots, def.Policy
	})
	ctx := context.Background()
	c := hearthtest.Connect(t, f.in.URL, "rules-estop")
	ignore := filepath.Join(proj, ".gitignore")
	r := c.Call("fs", map[string]any{"operation": "write", "path": ignore, "data": "bin/\n"})
	folderPermit, _ := r.Get("permit_id").(string)
	if r.State() != "pending" || folderPermit == "" {
		t.Fatalf("a hidden file must ask: %s", r.Raw)
	}
	execPermit, _ := execNeedingPermit(t, c, "hello")

	b := f.login(t)
	if err := f.in.App.Operator.EStop(ctx, "Ada", "stop everything"); err != nil {
		t.Fatal(err)
	}
	stored := func() (rules []govern.Rule, folders []govern.Workspace, lowered []govern.Lowering) {
		t.Helper()
		var err error
		if rules, err = f.in.App.Gov.Rules(ctx); err != nil {
			t.Fatal(err)
		}
		if folders, err = f.in.App.Gov.Workspaces(ctx); err != nil {
			t.Fatal(err)
		}
		if lowered, err = f.in.App.Gov.Lowered(ctx); err != nil {
			t.Fatal(err)
		}
		return rules, folders, lowered
	}
	waiting := func(id string) bool {
		t.Helper()
		ps, err := f.in.App.Operator.Permits(ctx, "pending")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.ID == id {
				return true
			}
		}
		return false
	}

	f.post(t, b, "/permits/"+folderPermit+"/approve", "operator", "Ada", "scope", "folder", "folder", proj)
	page := f.get(t, b, "/permits")
	if !strings.Contains(page, "no workspace was added: the emergency stop is on") {
		t.Fatalf("the page does not say the workspace was refused:\n%s", page)
	}
	f.post(t, b, "/permits/"+execPermit+"/approve", "operator", "Ada", "scope", "always", "program", "echo", "arg", "hello")
	page = f.get(t, b, "/permits")
	if !strings.Contains(page, "no rule was added: the emergency stop is on") {
		t.Fatalf("the page does not say the allow-rule was refused:\n%s", page)
	}
	// The operator's own calls are refused the same way, not only the
	// panel's forms.
	if _, err := f.in.App.Operator.AddRule(ctx, "Ada", "echo", proj, "hello"); !errors.Is(err, govern.ErrEStopLatched) {
		t.Fatalf("AddRule while stopped: %v, want ErrEStopLatched", err)
	}
	pending, err := f.in.App.Operator.Permits(ctx, "pending")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pending {
		if p.ID == folderPermit {
			if _, err := f.in.App.Operator.AddWorkspace(ctx, "Ada", p, proj); !errors.Is(err, govern.ErrEStopLatched) {
				t.Fatalf("AddWorkspace while stopped: %v, want ErrEStopLatched", err)
			}
		}
	}
	if rules, folders, lowered := stored(); len(rules)+len(folders)+len(lowered) != 0 {
		t.Fatalf("stored while the e-stop is on: rules %+v, workspaces %+v, lowered %+v", rules, folders, lowered)
	}
	if !waiting(folderPermit) || !waiting(execPermit) {
		t.Fatal("a refused approval did not leave its request waiting")
	}
	if _, err := os.Stat(ignore); err == nil {
		t.Fatal("the hidden file was written while the e-stop is on")
	}

	if err := f.in.App.Operator.Reset(ctx, "Ada"); err != nil {
		t.Fatal(err)
	}
	f.post(t, b, "/permits/"+folderPermit+"/approve", "operator", "Ada", "scope", "folder", "folder", proj)
	if _, folders, _ := stored(); len(folders) != 1 || folders[0].Folder != proj {
		t.Fatalf("after the reset the workspace must be added: %+v", folders)
	}
	if waiting(folderPermit) {
		t.Fatal("after the reset the request must be allowed")
	}
}
