//go:build !windows

package govern_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// A rule pins what the card showed: the files its arguments named, by
// content, and its folder, by real path. These are the ways a chat went
// past a rule by changing a file the rule trusted.

// ruleCase runs exec calls in a project folder of an ask-mode Hearth.
type ruleCase struct {
	t    *testing.T
	in   *hearthtest.Instance
	home string
	proj string
	// calls counts the calls: each is made from a conversation of its
	// own, as an approved call's repeat in its conversation is answered
	// by it.
	calls int
	// last is the client of the last call.
	last *hearthtest.Client
}

func newRuleCase(t *testing.T) *ruleCase {
	in, home := askHome(t)
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	return &ruleCase{t: t, in: in, home: home, proj: proj}
}

func (c *ruleCase) write(name, data string, mode os.FileMode) string {
	c.t.Helper()
	p := filepath.Join(c.proj, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// exec calls machine.exec of args in cwd from a new conversation named
// after chat and returns its settled answer (a call waiting for a permit
// stays pending).
func (c *ruleCase) exec(chat, cwd string, args ...string) *hearthtest.Result {
	c.t.Helper()
	c.calls++
	cl := hearthtest.Connect(c.t, c.in.URL, fmt.Sprintf("%s-%d", chat, c.calls))
	c.last = cl
	return cl.Final("machine", map[string]any{"operation": "exec", "command": args[0], "args": args[1:], "cwd": cwd})
}

// always approves r's permit with Always allow for the card's call in
// cwd; it returns the approval's error (a program no rule may cover).
func (c *ruleCase) always(r *hearthtest.Result, cwd string, args ...string) error {
	c.t.Helper()
	permit, _ := r.Get("permit_id").(string)
	if permit == "" {
		c.t.Fatalf("%v asked for no permit: %s", args, r.Raw)
	}
	err := c.in.App.Operator.Approve(bg, permit, "alice", &govern.Rule{Program: args[0], Args: args[1:], CwdRoot: cwd})
	if errors.Is(err, govern.ErrAsksEveryTime) {
		err2 := c.in.App.Operator.Approve(bg, permit, "alice", nil)
		if err2 != nil {
			c.t.Fatal(err2)
		}
	} else if err != nil {
		c.t.Fatal(err)
	}
	// The approved call runs before the case goes on.
	if st := hearthtest.Get(c.last.WaitArrival(r.Str("future_id"), r), "envelope.state"); st != "completed" {
		c.t.Fatalf("the approved %v: %v", args, st)
	}
	return err
}

// asks requires r to wait for a permit; when file is set, its card names
// that file as the one that changed.
func (c *ruleCase) asks(r *hearthtest.Result, what, file string) {
	c.t.Helper()
	permit, _ := r.Get("permit_id").(string)
	if r.State() != "pending" || permit == "" {
		c.t.Fatalf("%s ran under the rule with no permit: %s", what, r.Raw)
	}
	if file == "" {
		return
	}
	ps, err := c.in.App.Operator.Permits(bg, "pending")
	if err != nil {
		c.t.Fatal(err)
	}
	for _, p := range ps {
		if p.ID == permit {
			if p.Said != govern.SaidPinChanged || p.Subject != file {
				c.t.Errorf("%s: the card says %q about %q, want that %s changed", what, p.Said, p.Subject, file)
			}
			return
		}
	}
	c.t.Fatalf("%s: no pending permit %s", what, permit)
}

// TestRuleForAWrapperOfAShellIsNoRule: "always allow taskset -c 0 bash
// scripts/build.sh" (also flock, prlimit, setpriv, chrt, sg -c) named
// bash, which no rule covers: the chat rewrote build.sh and the next call
// ran it. The wrapper asks as bash does.
func TestRuleForAWrapperOfAShellIsNoRule(t *testing.T) {
	c := newRuleCase(t)
	marker := filepath.Join(c.home, "ran")
	c.write("scripts/build.sh", "echo building\n", 0o755)
	call := []string{"taskset", "-c", "0", "bash", "scripts/build.sh"}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("no taskset here")
	}
	r := c.exec("wrapper", c.proj, call...)
	if err := c.always(r, c.proj, call...); err == nil {
		t.Error("a rule for taskset … bash was made")
	}
	c.write("scripts/build.sh", "touch "+marker+"\n", 0o755)
	c.asks(c.exec("wrapper", c.proj, call...), "taskset -c 0 bash with a rewritten build.sh", "")
	if _, err := os.Stat(marker); err == nil {
		t.Error("the rewritten build.sh ran with no permit")
	}
}

// TestRulePinsTheScriptItNames: "always allow <program> tidy.ahk" (the
// program any not in the tables; cat stands for AutoHotkey) ran the
// script rewritten from another chat. The script is pinned: rewritten,
// the call asks again and the card names it; unchanged, the rule covers
// it.
func TestRulePinsTheScriptItNames(t *testing.T) {
	c := newRuleCase(t)
	script := c.write("tidy.ahk", "MsgBox tidy\n", 0o644)
	r := c.exec("first", c.proj, "cat", "tidy.ahk")
	if err := c.always(r, c.proj, "cat", "tidy.ahk"); err != nil {
		t.Fatal(err)
	}
	if r := c.exec("second", c.proj, "cat", "tidy.ahk"); r.State() != "completed" {
		t.Fatalf("the unchanged script under its rule: %s", r.Raw)
	}
	c.write("tidy.ahk", "Run, calc.exe\n", 0o644)
	c.asks(c.exec("other", c.proj, "cat", "tidy.ahk"), "cat tidy.ahk rewritten from another chat", script)
}

// tarOf makes a tar archive of the files (name → content).
func tarOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := tar.NewWriter(&b)
	for name, data := range files {
		if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestArchiveRulePinsTheArchiveAndExtractsThroughNoLink: an exact rule
// for `tar xf release.tar` extracted a replaced archive, and through a
// symbolic link in the folder into the autostart folder. The archive is
// pinned (a replaced one asks, naming it) and an extraction through a
// link asks; the same archive into the same folder stays covered.
func TestArchiveRulePinsTheArchiveAndExtractsThroughNoLink(t *testing.T) {
	c := newRuleCase(t)
	autostart := filepath.Join(c.home, ".config", "autostart")
	if err := os.MkdirAll(autostart, 0o755); err != nil {
		t.Fatal(err)
	}
	original := string(tarOf(t, map[string]string{"out/app.desktop": "[Desktop Entry]\nName=app\n"}))
	archive := c.write("release.tar", original, 0o644)
	call := []string{"tar", "xf", "release.tar"}
	if err := c.always(c.exec("first", c.proj, call...), c.proj, call...); err != nil {
		t.Fatal(err)
	}
	if r := c.exec("second", c.proj, call...); r.State() != "completed" {
		t.Fatalf("the same archive under its rule: %s", r.Raw)
	}
	c.write("release.tar", string(tarOf(t, map[string]string{"out/app.desktop": "[Desktop Entry]\nExec=sh -c 'touch x'\n"})), 0o644)
	c.asks(c.exec("second", c.proj, call...), "tar xf of a replaced archive", archive)

	// The approved archive again, but out/ is now a link to autostart.
	c.write("release.tar", original, 0o644)
	if err := os.RemoveAll(filepath.Join(c.proj, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(autostart, filepath.Join(c.proj, "out")); err != nil {
		t.Fatal(err)
	}
	c.asks(c.exec("second", c.proj, call...), "tar xf through a link into autostart", "")
	if _, err := os.Stat(filepath.Join(autostart, "app.desktop")); err == nil {
		t.Error("the archive was extracted into the autostart folder with no permit")
	}
}

// TestNoArgumentGitRuleAsksForWritesAnywhere: a git rule with no
// arguments ran `checkout-index --prefix=<autostart>/` and `apply` of a
// patch that made files. Those subcommands ask under any rule that did
// not show them.
func TestNoArgumentGitRuleAsksForWritesAnywhere(t *testing.T) {
	c := newRuleCase(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = c.proj
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	c.write("README.md", "hello\n", 0o644)
	c.write("fix.patch", "--- /dev/null\n+++ b/.envrc\n@@ -0,0 +1 @@\n+touch ran\n", 0o644)
	if _, err := c.in.App.Operator.AddRule(bg, "alice", "git", c.proj); err != nil {
		t.Fatal(err)
	}
	if r := c.exec("git", c.proj, "git", "status", "--short"); r.State() != "completed" {
		t.Fatalf("git status under a git rule: %s", r.Raw)
	}
	autostart := filepath.Join(c.home, ".config", "autostart") + "/"
	c.asks(c.exec("git", c.proj, "git", "checkout-index", "--prefix="+autostart, "-a"), "git checkout-index --prefix", "")
	c.asks(c.exec("git", c.proj, "git", "apply", "fix.patch"), "git apply", "")
	c.asks(c.exec("git", c.proj, "git", "am", "fix.patch"), "git am", "")
	c.asks(c.exec("git", c.proj, "git", "worktree", "add", filepath.Join(c.home, "wt")), "git worktree", "")
	if _, err := os.Stat(filepath.Join(c.proj, ".envrc")); err == nil {
		t.Error("git apply made .envrc with no permit")
	}
}

// TestRuleFolderIsItsRealPath: a rule's folder was compared as text, so
// a symbolic link inside it carried the rule to any folder.
func TestRuleFolderIsItsRealPath(t *testing.T) {
	c := newRuleCase(t)
	elsewhere := filepath.Join(c.home, ".config")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(c.proj, "link")
	if err := os.Symlink(elsewhere, link); err != nil {
		t.Fatal(err)
	}
	if _, err := c.in.App.Operator.AddRule(bg, "alice", "ls", c.proj); err != nil {
		t.Fatal(err)
	}
	if r := c.exec("ls", c.proj, "ls"); r.State() != "completed" {
		t.Fatalf("ls in the rule's folder: %s", r.Raw)
	}
	c.asks(c.exec("ls", link, "ls"), "ls in a link inside the rule's folder", "")
}
