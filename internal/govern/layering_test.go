package govern_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestGovernanceHoldsNoEngine: governance imports none of the engines it
// governs, nor the layer that carries its decisions out on them, so calls
// go one way: the dispatcher, the job queue and internal/control call
// governance, and governance returns what is left to do (a Decision)
// instead of calling back. Types both sides need live in
// internal/callpath.
func TestGovernanceHoldsNoEngine(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to list the package's imports with")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/hearth-dev/hearth/"
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[strings.TrimPrefix(p, mod)] = true
	}
	if !deps["internal/callpath"] || !deps["internal/govern"] {
		t.Fatalf("go list did not list govern's own imports: %s", out)
	}
	for _, engine := range []string{"internal/dispatch", "internal/jobs", "internal/runs", "internal/recipes",
		"internal/machine", "internal/mcpserver", "internal/control", "internal/app"} {
		if deps[engine] {
			t.Errorf("internal/govern depends on %s: governance must return what its decisions leave to do, not reach the engine", engine)
		}
	}
}
