//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
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
