//go:build !windows

package govern_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// The attacks on "always allow git" as a model would make them, through
// real calls and a real git: each asks, and none of them runs.
func TestGitRuleAttacksAsk(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "git-rule")
	home := in.Home
	gitCall := func(env map[string]string, args ...string) map[string]any {
		m := map[string]any{"operation": "exec", "command": "git", "args": args, "cwd": home}
		if env != nil {
			m["env"] = env
		}
		return m
	}
	// The operator approves the card "git status" with Always allow.
	r := c.Call("machine", gitCall(nil, "status"))
	if r.State() != "pending" {
		t.Fatalf("git status before any rule: %s", r.Raw)
	}
	if err := in.App.Operator.Approve(bg, r.Get("permit_id").(string), "alice", &govern.Rule{Program: "git", Args: []string{"status"}, CwdRoot: home}); err != nil {
		t.Fatal(err)
	}
	if r := c.Call("machine", gitCall(map[string]string{"LANG": "C"}, "status", "--short")); r.State() != "completed" {
		t.Fatalf("git status --short under the rule: %s", r.Raw)
	}
	if r := c.Call("machine", gitCall(nil, "push")); r.State() != "pending" {
		t.Fatalf("git push under the rule for git status: %s", r.Raw)
	}

	// A folder the model wrote, whose git settings run a program.
	marker := filepath.Join(home, "ran")
	evil := filepath.Join(home, "evil")
	if err := os.MkdirAll(evil, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "[core]\n\tpager = touch " + marker + "\n\tfsmonitor = touch " + marker + "\n[alias]\n\tstatus = !touch " + marker + "\n"
	if err := os.WriteFile(filepath.Join(evil, ".gitconfig"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]map[string]any{
		"HOME":              gitCall(map[string]string{"HOME": evil}, "status"),
		"GIT_EXTERNAL_DIFF": gitCall(map[string]string{"GIT_EXTERNAL_DIFF": "touch " + marker}, "status"),
		"GIT_CONFIG_GLOBAL": gitCall(map[string]string{"GIT_CONFIG_GLOBAL": filepath.Join(evil, ".gitconfig")}, "status"),
		"-c after status":   gitCall(nil, "status", "-c", "x"),
	} {
		if r := c.Call("machine", call); r.State() != "pending" {
			t.Errorf("%s: %s", name, r.Raw)
		}
	}

	// A rule made before rules kept arguments ("git", any arguments) still
	// asks for a configuration that runs a program.
	if _, err := in.App.Operator.AddRule(bg, "alice", "git", home); err != nil {
		t.Fatal(err)
	}
	if r := c.Call("machine", gitCall(nil, "log", "-1")); r.State() != "completed" {
		t.Fatalf("git log under the rule for git: %s", r.Raw)
	}
	for name, args := range map[string][]string{
		"alias":       {"-c", "alias.x=!touch " + marker, "x"},
		"config-env":  {"--config-env=core.pager=HOME", "log"},
		"exec-path":   {"--exec-path=" + evil, "status"},
		"-C":          {"-C", evil, "status"},
		"upload-pack": {"ls-remote", "--upload-pack=touch " + marker, evil},
	} {
		if r := c.Call("machine", gitCall(nil, args...)); r.State() != "pending" {
			t.Errorf("%s under the rule for git: %s", name, r.Raw)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a program named by the model's settings ran")
	}
}

// The operator's AddRule refuses a rule for a program that asks every
// time, with the reason; the tmux server such a rule would start
// outlives the e-stop.
func TestAddRuleRefusesAProgramThatAsksEveryTime(t *testing.T) {
	in := hearthtest.Start(t, nil)
	for _, p := range []string{"tmux", "screen", "bash", "python3"} {
		_, err := in.App.Operator.AddRule(bg, "alice", p, "")
		if !errors.Is(err, govern.ErrAsksEveryTime) {
			t.Errorf("a rule for %s: %v", p, err)
		}
	}
	_, err := in.App.Operator.AddRule(bg, "alice", "tmux", "")
	if err == nil || !strings.Contains(err.Error(), "keep running after Hearth stops them") {
		t.Fatalf("a rule for tmux does not say why: %v", err)
	}
}
