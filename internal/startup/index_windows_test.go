package startup_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows/registry"

	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup"
)

// runKey is the user's Run key.
const runKey = `Software\Microsoft\Windows\CurrentVersion\Run`

// setRun sets the user's Run value name to cmd for the test.
func setRun(t *testing.T, name, cmd string) {
	t.Helper()
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		t.Fatalf("open the Run key: %v", err)
	}
	defer k.Close()
	if err := k.SetStringValue(name, cmd); err != nil {
		t.Fatalf("set the Run value: %v", err)
	}
	t.Cleanup(func() {
		k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
		if err == nil {
			k.DeleteValue(name)
			k.Close()
		}
	})
}

// workDir is a temporary folder in the user's profile.
func workDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp(os.Getenv("USERPROFILE"), "hearth-startup-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func newIndex(t *testing.T) *startup.Index {
	t.Helper()
	x, err := startup.New(startup.Options{Env: risk.KnownFolderEnv(os.Getenv), Real: risk.RealPrefix})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestRunEntryNamesItsScript: an HKCU Run value that starts AutoHotkey
// on a script names the script (in any case), added while the index is
// in use, and no longer once the value is removed.
func TestRunEntryNamesItsScript(t *testing.T) {
	d := workDir(t)
	script := filepath.Join(d, "tidy.ahk")
	x := newIndex(t)
	if _, ok := x.Match(script); ok {
		t.Fatal("named before the Run value exists")
	}
	setRun(t, "HearthTestTidy", `"C:\Program Files\AutoHotkey\AutoHotkey.exe" `+script)
	h, ok := x.Match(strings.ToUpper(script))
	if !ok || h.Entry.Kind != startup.KindRun || h.Entry.Name != "HearthTestTidy" {
		t.Fatalf("the Run value's script: %+v %v; entries %+v", h, ok, x.Entries())
	}
	if s := h.Said(script); !strings.Contains(s, "the sign-in entry “HearthTestTidy”") {
		t.Errorf("the card says %q", s)
	}
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		t.Fatal(err)
	}
	k.DeleteValue("HearthTestTidy")
	k.Close()
	if _, ok := x.Match(script); ok {
		t.Error("still named after the Run value was removed")
	}
}

// TestStartupFolderMovedWhileRunning: a Startup folder redirected
// through User Shell Folders while the index is in use is read where it
// now is: its shortcut's script is named.
func TestStartupFolderMovedWhileRunning(t *testing.T) {
	d := workDir(t)
	x := newIndex(t)
	moved := filepath.Join(d, "Moved Startup")
	script := filepath.Join(d, "scripts", "tidy.ahk")
	if err := os.MkdirAll(moved, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(moved, "Tidy.lnk"), lnk(`C:\Program Files\AutoHotkey\AutoHotkey.exe`, `"`+script+`"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := x.Match(script); ok {
		t.Fatal("named before the Startup folder moved")
	}
	redirect(t, "Startup", moved)
	h, ok := x.Match(script)
	if !ok || h.Entry.Kind != startup.KindStartup || h.Entry.Name != "Tidy" {
		t.Fatalf("the moved Startup folder's shortcut: %+v %v; entries %+v", h, ok, x.Entries())
	}
}
