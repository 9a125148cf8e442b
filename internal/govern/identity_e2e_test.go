//go:build !windows

package govern_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// realProgram returns the file the program name resolves to on this
// machine, after symbolic links, or skips.
func realProgram(t *testing.T, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				return real
			}
		}
	}
	t.Skipf("none of %q here", names)
	return ""
}

// copyProgram copies the file src to dir/name, executable, as a model
// would with "cp /bin/bash ~/bin/tool".
func copyProgram(t *testing.T, src, dir, name string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(dir, name)
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// A real shell copied under a new name is the shell: no rule covers it,
// whether the rule names the copy's path, a glob, the copy's base name
// on PATH, or git (a copy of bash saved as git on PATH); a relative path
// from the call's folder is the same file. A renamed git is git: its
// settings ask under a rule for the new name. A copy of a program the
// tables do not name stays covered.
func TestRenamedShellIsCoveredByNoRule(t *testing.T) {
	bash := realProgram(t, "bash", "sh")
	dir := t.TempDir()
	tool := copyProgram(t, bash, dir, "tool")
	fakeGit := filepath.Join(dir, "git")
	copyProgram(t, bash, dir, "git")
	path := os.Getenv("PATH")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+path)
	code := []string{"-c", "touch x"}
	for _, c := range []struct {
		name string
		rule govern.Rule
		use  govern.ProgramUse
	}{
		{"a rule for the copy's path", govern.Rule{Program: tool}, govern.ProgramUse{Command: tool, Args: code}},
		{"a glob rule", govern.Rule{Program: filepath.Join(dir, "*")}, govern.ProgramUse{Command: tool, Args: code}},
		{"a rule for the copy's name", govern.Rule{Program: "tool"}, govern.ProgramUse{Command: "tool", Args: code}},
		{"a rule for git, the copy on PATH", govern.Rule{Program: "git"}, govern.ProgramUse{Command: "git", Args: code}},
		{"a rule for git status, the copy on PATH", govern.Rule{Program: "git", Args: []string{"status"}}, govern.ProgramUse{Command: "git", Args: []string{"status"}}},
		{"a relative path from the call's folder", govern.Rule{Program: filepath.Join(dir, "*")}, govern.ProgramUse{Command: "./tool", Args: code, Cwd: dir}},
	} {
		if govern.RuleAllows(c.rule, c.use) {
			t.Errorf("%s: rule %+v covers %+v, a copy of %s", c.name, c.rule, c.use, bash)
		}
	}
	if p, err := exec.LookPath("git"); err != nil || p != fakeGit {
		t.Fatalf("PATH finds git at %s (%v), not the copy", p, err)
	}
	t.Setenv("PATH", path)
	if git := realProgramOr(t, "git"); git != "" {
		vcs := copyProgram(t, git, dir, "vcs")
		rule := govern.Rule{Program: vcs, Args: []string{"log"}}
		if !govern.RuleAllows(rule, govern.ProgramUse{Command: vcs, Args: []string{"log"}}) {
			t.Error("a rule for a renamed git does not cover the git log it showed")
		}
		// Under a name the argument table does not hold, only the exact
		// call is covered; as git, its -c asks too.
		if govern.RuleAllows(rule, govern.ProgramUse{Command: vcs, Args: []string{"log", "-c", "alias.x=!touch p", "x"}}) {
			t.Error("a rule for a renamed git covers its -c, as a rule for git would not")
		}
	}
	// A copy of cp saved as rg on PATH is cp: a rule for rg covers only
	// the exact call, as for cp, not rg's row (where a folder to copy
	// into would be one more plain argument).
	rgDir := t.TempDir()
	copyProgram(t, realProgram(t, "cp"), rgDir, "rg")
	t.Setenv("PATH", rgDir+string(os.PathListSeparator)+path)
	if govern.RuleAllows(govern.Rule{Program: "rg", Args: []string{"notes.txt"}}, govern.ProgramUse{Command: "rg", Args: []string{"notes.txt", "/home/u/.config/autostart/"}}) {
		t.Error("a rule for rg covers a copy of cp saved as rg with a folder added")
	}
	t.Setenv("PATH", path)
	lister := copyProgram(t, realProgram(t, "ls"), dir, "lister")
	if !govern.RuleAllows(govern.Rule{Program: lister, Args: []string{"-l"}}, govern.ProgramUse{Command: lister, Args: []string{"-l"}}) {
		t.Error("a rule for a renamed ls does not cover it: only the tables' programs are told by what they are")
	}
}

func realProgramOr(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return real
}

// Through real calls: the operator cannot make a rule for a renamed
// shell (the refusal says what it is a copy of), and under a glob rule
// for the folder the model copied it into, a call to the copy asks and
// its code does not run, while a renamed copy of true runs.
func TestRenamedShellAsksThroughACall(t *testing.T) {
	bash := realProgram(t, "bash", "sh")
	in := hearthtest.Start(t, nil)
	c := hearthtest.Connect(t, in.URL, "renamed-shell")
	bin := filepath.Join(in.Home, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	tool := copyProgram(t, bash, bin, "tool")
	done := copyProgram(t, realProgram(t, "true"), bin, "done")
	if why := in.App.Gov.AsksEveryTimeWhy("bin/tool", in.Home); !strings.Contains(why, "copy of") {
		t.Errorf("the card for bin/tool in the home folder says %q, not that it is a copy of a shell", why)
	}
	_, err := in.App.Operator.AddRule(bg, "alice", tool, in.Home)
	if !errors.Is(err, govern.ErrAsksEveryTime) || !strings.Contains(err.Error(), "copy of") {
		t.Fatalf("a rule for a renamed shell: %v", err)
	}
	if _, err := in.App.Operator.AddRule(bg, "alice", filepath.Join(bin, "*"), in.Home); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(in.Home, "ran")
	r := c.Call("machine", map[string]any{"operation": "exec", "command": tool, "args": []string{"-c", "touch " + marker}, "cwd": in.Home})
	if r.State() != "pending" {
		t.Fatalf("a renamed shell under a glob rule: %s", r.Raw)
	}
	if r := c.Call("machine", map[string]any{"operation": "exec", "command": done, "cwd": in.Home}); r.State() != "completed" {
		t.Fatalf("a renamed true under the glob rule: %s", r.Raw)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the renamed shell ran the model's code")
	}
}
