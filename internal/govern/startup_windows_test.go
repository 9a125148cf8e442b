package govern_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup/startuptest"
)

// TestWindowsStartupEntriesAsk: on the real Windows build, through the
// MCP server, dispatcher and governance, in ask mode: writing the .ahk
// script an HKCU Run value starts through AutoHotkey waits for the
// operator and the card names the Run value; and after the Startup
// folder is moved (User Shell Folders) while Hearth runs, a write into
// the new folder waits too, as a file that starts at sign-in.
func TestWindowsStartupEntriesAsk(t *testing.T) {
	profile := os.Getenv("USERPROFILE")
	work, err := os.MkdirTemp(profile, "hearth-startup-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	in := hearthtest.Start(t, func(c *config.Config) {
		c.Roots = []string{profile}
		c.Policy.Mode = config.ModeAsk
		// The client is this process; under Wine a connection's owner
		// cannot always be told (internal/peeruser tests the check).
		c.LoopbackSameUser = false
	})
	cl := hearthtest.Connect(t, in.URL, "startup-windows")
	write := func(p string) *hearthtest.Result {
		return cl.Final("fs", map[string]any{"operation": "write", "path": p, "data": "MsgBox hi\n"})
	}
	ctx := context.Background()

	tidy := filepath.Join(work, "scripts", "tidy.ahk")
	if err := os.MkdirAll(filepath.Dir(tidy), 0o755); err != nil {
		t.Fatal(err)
	}
	startuptest.SetUserValue(t, `Software\Microsoft\Windows\CurrentVersion\Run`, "HearthTestTidy", `AutoHotkey.exe `+tidy, false)
	time.Sleep(300 * time.Millisecond)
	if r := write(tidy); r.State() != "pending" {
		t.Errorf("the script a Run value starts must ask: %s", r.Raw)
	} else if _, err := os.Stat(tidy); err == nil {
		t.Error("tidy.ahk was written before the operator allowed it")
	}

	moved := filepath.Join(work, "Moved Startup")
	if err := os.MkdirAll(moved, 0o755); err != nil {
		t.Fatal(err)
	}
	startuptest.SetUserValue(t, `Software\Microsoft\Windows\CurrentVersion\Explorer\User Shell Folders`, "Startup", moved, true)
	time.Sleep(300 * time.Millisecond)
	late := filepath.Join(moved, "late.ahk")
	if r := write(late); r.State() != "pending" {
		t.Errorf("a write into the Startup folder moved while Hearth runs must ask: %s", r.Raw)
	}

	pending, err := in.App.Operator.Permits(ctx, "pending")
	if err != nil {
		t.Fatal(err)
	}
	said := map[string]string{}
	for _, p := range pending {
		said[strings.ToLower(p.Subject)] = p.Said
		if p.Case != string(risk.CasePersist) {
			t.Errorf("the card for %s is of case %s, want %s", p.Subject, p.Case, risk.CasePersist)
		}
	}
	if s := said[strings.ToLower(tidy)]; !strings.Contains(s, "the sign-in entry “HearthTestTidy”") {
		t.Errorf("the card for tidy.ahk says %q", s)
	}
	if s := said[strings.ToLower(late)]; s != "make a program start every time you sign in" {
		t.Errorf("the card for the moved Startup folder says %q", s)
	}
}
