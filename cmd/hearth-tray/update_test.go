package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hearth-dev/hearth/internal/hearthtest"
)

// TestHandedOverSaysWhereHearthRuns: when a serve started in a terminal
// hands over, it says where the Hearth that now runs in the background
// is, its control panel, and how to stop it (its output here is not a
// terminal, so no sign-in token is printed).
func TestHandedOverSaysWhereHearthRuns(t *testing.T) {
	home := t.TempDir()
	p := hearthtest.StartProcess(t, home)
	var out bytes.Buffer
	reportHandedOver(context.Background(), home, &out)
	pid := p.Cmd.Process.Pid
	panel, _, _ := strings.Cut(p.PanelURL, "login?")
	for _, want := range []string{
		fmt.Sprintf("now runs in the background (process %d) at %s", pid, p.URL),
		"Control panel at " + panel,
		stopSentence(pid),
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("missing %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "token=") {
		t.Fatalf("a login token without a terminal:\n%s", out.String())
	}
}
