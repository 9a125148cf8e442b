package winconsole

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const childEnv = "HEARTH_WINCONSOLE_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "" {
		os.Exit(m.Run())
	}
	// Child: behave like a subcommand of hearth-tray.
	attached := AttachParent()
	fmt.Fprintf(os.Stdout, "stdout ok attached=%v\n", attached)
	fmt.Fprintln(os.Stderr, "stderr ok")
	os.Exit(7)
}

// TestRedirectionSurvives starts a child whose output goes to pipes, as when
// CI or a script runs `hearth-tray serve > log`: after AttachParent its
// output and exit code must still arrive through them.
func TestRedirectionSurvives(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("child: err = %v, want exit code 7", err)
	}
	if !strings.Contains(stdout.String(), "stdout ok") {
		t.Errorf("child stdout = %q, want its output", stdout.String())
	}
	if !strings.Contains(stderr.String(), "stderr ok") {
		t.Errorf("child stderr = %q, want its output", stderr.String())
	}
}
