//go:build !windows

package govern_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hearth-dev/hearth/internal/govern"
	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestWorkspaceFileAsks: a project's .vscode/tasks.json and
// settings.json are persistence places (a task with runOn folderOpen runs
// when the folder is opened; settings name programs the editor starts),
// and a VS Code workspace file holds the same "tasks", "launch" and
// "settings" sections under a name that is not hidden, and runs them when
// the workspace is opened: writing one asks.
func TestWorkspaceFileAsks(t *testing.T) {
	in, home := askHome(t)
	cl := hearthtest.Connect(t, in.URL, "workspace-file")
	ws := `{"folders":[{"path":"."}],"settings":{"terminal.integrated.env.linux":{"BASH_ENV":"/tmp/x"}},` +
		`"tasks":{"version":"2.0.0","tasks":[{"label":"x","type":"shell","command":"touch ran","runOptions":{"runOn":"folderOpen"}}]}}`
	p := filepath.Join(home, "proj", "proj.code-workspace")
	if r := cl.Call("fs", map[string]any{"operation": "write", "path": p, "data": ws}); r.State() != "pending" {
		t.Errorf("%s (a task that runs when the workspace opens) wrote with no permit: %s", p, r.State())
	}
}

// TestPythonEnvironmentScriptsAsk: a Python environment in the
// home (a project's venv, a Miniconda install) holds scripts a shell
// sources by itself: venv/bin/activate (mode 0644, sourced by
// "source venv/bin/activate" and by VS Code's terminals) and conda's
// etc/conda/activate.d/*.sh (sourced by "conda activate", which conda's
// .bashrc block runs at every new terminal), and its lib/pythonX.Y holds
// modules every python start imports (site.py). None of these paths is
// hidden, in the system's folders or a program by its bits. The same
// holds for other tools installed in the home whose files a shell
// start-up file sources (the Google Cloud SDK's path.bash.inc, perl's
// local::lib). Each write asks, and sourcing the activate script runs
// nothing of the model's.
func TestPythonEnvironmentScriptsAsk(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 here")
	}
	in, home := askHome(t)
	venv := filepath.Join(home, "proj", "venv")
	if out, err := exec.Command(python, "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Fatalf("make a venv: %v %s", err, out)
	}
	activate := filepath.Join(venv, "bin", "activate")
	info, err := os.Stat(activate)
	if err != nil || info.Mode().Perm()&0o111 != 0 {
		t.Fatalf("venv's activate should be a plain 0644 file: %v %v", info, err)
	}
	conda := filepath.Join(home, "miniconda3")
	site := filepath.Join(conda, "lib", "python3.12", "site.py")
	if err := os.MkdirAll(filepath.Dir(site), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(site, []byte("import os\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(conda, "conda-meta"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(home, "ran")
	cl := hearthtest.Connect(t, in.URL, "python-env")
	calls := map[string]map[string]any{
		"venv activate": {"operation": "patch", "path": activate, "replacements": []any{
			map[string]any{"old": "deactivate () {", "new": "touch " + marker + "\ndeactivate () {"}}},
		"conda activate.d": {"operation": "write", "path": filepath.Join(conda, "etc", "conda", "activate.d", "x.sh"), "data": "touch " + marker + "\n"},
		"conda site.py": {"operation": "patch", "path": site, "replacements": []any{
			map[string]any{"old": "import os\n", "new": "import os\nos.system('touch " + marker + "')\n"}}},
		// The Google Cloud SDK's installer has .bashrc source this file at
		// every terminal; local::lib's line in .bashrc loads this module.
		"gcloud path.bash.inc": {"operation": "write", "path": filepath.Join(home, "google-cloud-sdk", "path.bash.inc"), "data": "touch " + marker + "\n"},
		"perl local::lib":      {"operation": "write", "path": filepath.Join(home, "perl5", "lib", "perl5", "local", "lib.pm"), "data": "system('touch " + marker + "');1;\n"},
	}
	for name, args := range calls {
		if r := cl.Call("fs", args); r.State() != "pending" {
			t.Errorf("%s: %s wrote with no permit: %s", name, args["path"], r.State())
		}
	}
	// What the patched activate does when a terminal sources it.
	if out, err := exec.Command("bash", "-c", ". "+activate).CombinedOutput(); err != nil {
		t.Logf("source activate: %v %s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("sourcing the venv's activate ran the model's command with no permit")
	}
}

// TestGitStatusRuleBareRepoAsks: under the rule "always allow git
// status" in a folder that is a workspace, the model writes files (HEAD,
// config, objects/…, refs/…) that make a subfolder look like a git directory,
// with core.worktree and core.fsmonitor in its config, then runs git
// status with that subfolder as cwd: git finds the folder itself as the
// repository (safe.bareRepository defaults to all), reads its config and
// runs the fsmonitor program. None of the files is under a ".git", but
// the write that completes the look of a git folder (here the last of
// refs/) is one inside git's own folder: it asks, and git status under
// the rule runs nothing of the model's.
func TestGitStatusRuleBareRepoAsks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	in, home := askHome(t)
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	cl := hearthtest.Connect(t, in.URL, "git-bare")
	status := func(cwd string) map[string]any {
		return map[string]any{"operation": "exec", "command": "git", "args": []string{"status"}, "cwd": cwd}
	}
	r := cl.Call("machine", status(proj))
	if r.State() != "pending" {
		t.Fatalf("git status before any rule: %s", r.Raw)
	}
	if err := in.App.Operator.Approve(bg, r.Get("permit_id").(string), "alice", &govern.Rule{Program: "git", Args: []string{"status"}, CwdRoot: proj}); err != nil {
		t.Fatal(err)
	}

	marker := filepath.Join(home, "ran")
	evil := filepath.Join(proj, "docs")
	writes := []struct{ name, data string }{
		{"HEAD", "ref: refs/heads/main\n"},
		{"config", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = " + proj + "\n\tfsmonitor = touch " + marker + "\n"},
		{"objects/info/packs", "\n"},
		{"refs/heads/README.md", "x\n"},
	}
	for i, w := range writes {
		p := filepath.Join(evil, w.name)
		r := cl.Call("fs", map[string]any{"operation": "write", "path": p, "data": w.data})
		last := i == len(writes)-1
		if !last && i == 0 && r.State() == "pending" && r.Get("permit_id") != nil {
			// HEAD is not a document: its card offers the project as a
			// workspace, and the operator takes it, so config and
			// objects/ then run without asking.
			pending, err := in.App.Operator.Permits(bg, "pending")
			if err != nil || len(pending) != 1 {
				t.Fatalf("%v %+v", err, pending)
			}
			folder, ok := in.App.Gov.OfferedWorkspace(pending[0])
			if !ok || folder != proj {
				t.Fatalf("the card offers %q (%v), want %s", folder, ok, proj)
			}
			if _, err := in.App.Operator.ApproveWorkspace(bg, "alice", pending[0], folder); err != nil {
				t.Fatal(err)
			}
			cl.WaitArrival(r.Get("future_id").(string), r)
			continue
		}
		if last && r.State() != "pending" {
			t.Errorf("write %s, which makes %s look like a git folder, ran with no permit even in a workspace: %s", p, evil, r.State())
		} else if !last && r.State() != "completed" {
			t.Logf("write %s: %s", p, r.Raw)
		}
	}
	r = cl.Call("machine", status(evil))
	t.Logf("git status in %s: %s", evil, r.Raw)
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("git status under the rule ran the model's core.fsmonitor with no permit")
	}
}
