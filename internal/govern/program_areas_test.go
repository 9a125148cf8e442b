//go:build !windows

package govern_test

import (
	"path/filepath"
	"testing"

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
