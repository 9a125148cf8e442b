//go:build !windows

package web_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestPersistCardLeadsWithWhatTheChangeAdds: in the default
// configuration (ask, roots = the user's home), a write of ~/.bashrc that
// keeps its prompt line and appends a removal waits for the operator, and
// its card leads with the added command, not the file's first line (which
// was there already); the change shows as a diff on the card itself, not
// only as escaped JSON under Details. A start-up file that does not exist
// yet is said to be new as a whole.
func TestPersistCardLeadsWithWhatTheChangeAdds(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	const prompt = "export PS1=\"\\u@\\h$ \"\n"
	bashrc := filepath.Join(home, ".bashrc")
	if err := os.WriteFile(bashrc, []byte(prompt), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *config.Config) {
		def := config.Default()
		c.Roots, c.Policy = def.Roots, def.Policy
	})
	c := hearthtest.Connect(t, f.in.URL, "persist-card")
	if r := c.Call("fs", map[string]any{"operation": "write", "path": bashrc, "data": prompt + "rm -rf ~/Documents\n"}); r.State() != "pending" || r.Get("permit_id") == nil {
		t.Fatalf("the .bashrc write does not ask: %s", r.Raw)
	}
	profile := filepath.Join(home, ".profile")
	if r := c.Call("fs", map[string]any{"operation": "write", "path": profile, "data": "# mine\nsh ~/x.sh\n"}); r.State() != "pending" || r.Get("permit_id") == nil {
		t.Fatalf("the .profile write does not ask: %s", r.Raw)
	}
	b := f.login(t)
	page := f.get(t, b, "/permits")
	cards := strings.Split(page, `data-testid="permit"`)
	card := func(path string) string {
		t.Helper()
		for _, c := range cards[1:] {
			if strings.Contains(c, path) {
				return c
			}
		}
		t.Fatalf("no card for %s:\n%s", path, page)
		return ""
	}
	bc := card(bashrc)
	head, _, _ := strings.Cut(bc, "</h3>")
	if !strings.Contains(head, `it would add <code data-testid="permit-runs">rm -rf ~/Documents</code> to <code>`+bashrc+`</code>`) {
		t.Fatalf("the .bashrc card's headline is not what the change adds:\n%s", head)
	}
	if strings.Contains(head, "PS1") {
		t.Fatalf("the .bashrc card's headline names the line that was already there:\n%s", head)
	}
	diff, _, _ := strings.Cut(bc, "<details")
	if !strings.Contains(diff, `data-testid="permit-diff"`) || !strings.Contains(diff, `<span class="diff-add">+rm -rf ~/Documents`) ||
		!strings.Contains(diff, `<span class="diff-ctx"> export PS1=`) || strings.Contains(diff, "@@") {
		t.Fatalf("the .bashrc card does not show the change as a diff before Details:\n%s", diff)
	}
	if strings.Contains(diff, "The whole file is new") {
		t.Fatalf("the .bashrc card says the file is new:\n%s", diff)
	}
	pc := card(profile)
	if !strings.Contains(pc, `a new file <code>`+profile+`</code> that would run <code data-testid="permit-runs">sh ~/x.sh</code>`) ||
		!strings.Contains(pc, "The whole file is new") || !strings.Contains(pc, `<span class="diff-add">+sh ~/x.sh`) {
		t.Fatalf("the .profile card does not say the whole file is new:\n%s", pc)
	}
	if b, _ := os.ReadFile(bashrc); string(b) != prompt {
		t.Fatalf(".bashrc changed before the operator allowed it: %q", b)
	}
}
