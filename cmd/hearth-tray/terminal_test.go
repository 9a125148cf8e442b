//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/instance"
)

// TestResetRefusesNonTerminalStdin: /dev/null is a character device but
// not a terminal; a reset with it as stdin is refused before reading the
// confirmation, while a real pseudo-terminal passes the check.
func TestResetRefusesNonTerminalStdin(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if st, _ := null.Stat(); st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is not a character device here", os.DevNull)
	}
	if isTerminal(null) {
		t.Fatalf("%s taken for a terminal", os.DevNull)
	}
	var out, errb bytes.Buffer
	err = safetyCmd(context.Background(), []string{"reset", "--operator", "alice"}, null, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "interactive terminal") {
		t.Fatalf("reset with stdin from %s: %v (out %q)", os.DevNull, err, out.String())
	}
	if strings.Contains(out.String(), "Type reset") {
		t.Fatalf("the prompt was shown without a terminal: %q", out.String())
	}
	pipeR, pipeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pipeR.Close()
	defer pipeW.Close()
	if isTerminal(pipeR) {
		t.Fatal("a pipe taken for a terminal")
	}
	// A pseudo-terminal's master is a terminal: the check is not simply
	// always false.
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer ptmx.Close()
	if !isTerminal(ptmx) {
		t.Fatal("a pseudo-terminal was not recognized as a terminal")
	}
}

// TestResetRefusedToHearthsOwnPrograms: a reset run by a program the
// running Hearth started (here: instance.json names this test's parent as
// the running Hearth) is refused before anything else, terminal or not;
// one run outside Hearth's tree goes on to the terminal check.
func TestResetRefusedToHearthsOwnPrograms(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HEARTH_HOME", home)
	reset := func() error {
		var out, errb bytes.Buffer
		return safetyCmd(context.Background(), []string{"reset", "--operator", "alice"}, os.Stdin, &out, &errb)
	}
	if err := instance.WriteInfo(home, instance.Info{PID: os.Getppid()}); err != nil {
		t.Fatal(err)
	}
	if err := reset(); err == nil || !strings.Contains(err.Error(), "started by a program Hearth runs") {
		t.Fatalf("reset under the running Hearth: %v", err)
	}
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	if err := instance.WriteInfo(home, instance.Info{PID: other.Process.Pid}); err != nil {
		t.Fatal(err)
	}
	if err := reset(); err != nil && strings.Contains(err.Error(), "started by a program Hearth runs") {
		t.Fatalf("reset outside the running Hearth's tree refused as its own: %v", err)
	}
}
