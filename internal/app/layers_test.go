package app_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCallsGoDown: the control panel (web/…) sits above the engine
// (internal/…), and only the wiring that builds the panel, internal/app,
// reaches up to it. A lower package that needs something of the panel's
// (a host check, a number's wording) gets it from a package below both.
func TestCallsGoDown(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to list the packages' imports with")
	}
	const mod = "github.com/hearth-dev/hearth/"
	out, err := exec.Command(goTool, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", mod+"internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 20 {
		t.Fatalf("go list listed %d packages: %s", len(lines), out)
	}
	for _, line := range lines {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], mod)
		if pkg == "internal/app" {
			continue
		}
		for _, imp := range f[1:] {
			if imp == mod+"web" || strings.HasPrefix(imp, mod+"web/") {
				t.Errorf("%s imports %s: the panel is above the engine; move what both need below both", pkg, strings.TrimPrefix(imp, mod))
			}
		}
	}
}
