package startup_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"golang.org/x/sys/windows/registry"

	"github.com/hearth-dev/hearth/internal/risk"
	"github.com/hearth-dev/hearth/internal/startup"
	"github.com/hearth-dev/hearth/internal/startup/startuptest"
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
	if err := os.WriteFile(filepath.Join(moved, "Tidy.lnk"), startup.Lnk(`C:\Program Files\AutoHotkey\AutoHotkey.exe`, `"`+script+`"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := x.Match(script); ok {
		t.Fatal("named before the Startup folder moved")
	}
	startuptest.Redirect(t, "Startup", moved)
	h, ok := x.Match(script)
	if !ok || h.Entry.Kind != startup.KindStartup || h.Entry.Name != "Tidy" {
		t.Fatalf("the moved Startup folder's shortcut: %+v %v; entries %+v", h, ok, x.Entries())
	}
}

// TestWindowsProfilesAddinsAndServices: a PowerShell profile in
// Documents names the script it dot-sources; an Excel add-in value
// (OPEN) names its file; the services' ImagePath values are read.
func TestWindowsProfilesAddinsAndServices(t *testing.T) {
	d := workDir(t)
	x := newIndex(t)
	docs := risk.KnownFolderEnv(os.Getenv)("FOLDERID_Documents")
	if docs == "" {
		t.Fatal("no Documents known folder")
	}
	profile := filepath.Join(docs, "WindowsPowerShell", "profile.ps1")
	if _, err := os.Stat(profile); err == nil {
		t.Skipf("%s exists: not touching the user's profile", profile)
	}
	if err := os.MkdirAll(filepath.Dir(profile), 0o755); err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(d, "ps", "helpers.ps1")
	if err := os.WriteFile(profile, []byte("# mine\n. '"+helper+"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(profile) })
	if h, ok := x.Match(helper); !ok || h.Entry.Kind != startup.KindPowerShell {
		t.Errorf("the profile's dot-sourced script: %+v %v", h, ok)
	}

	addin := filepath.Join(d, "addins", "tools.xlam")
	k, _, err := registry.CreateKey(registry.CURRENT_USER, `Software\Microsoft\Office\16.0\Excel\Options`, registry.SET_VALUE)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.SetStringValue("OPEN", `/R "`+addin+`"`); err != nil {
		t.Fatal(err)
	}
	k.Close()
	t.Cleanup(func() {
		if k, err := registry.OpenKey(registry.CURRENT_USER, `Software\Microsoft\Office\16.0\Excel\Options`, registry.SET_VALUE); err == nil {
			k.DeleteValue("OPEN")
			k.Close()
		}
	})
	if h, ok := x.Match(addin); !ok || h.Entry.Kind != startup.KindOffice {
		t.Errorf("the Excel add-in: %+v %v", h, ok)
	}

	services := 0
	for _, e := range x.Entries() {
		if e.Kind == startup.KindService && len(e.Files) > 0 {
			services++
		}
	}
	if services == 0 {
		t.Error("no service's ImagePath was read")
	}
}

// TestScheduledTaskNamesItsScript: a scheduled task's file (UTF-16 XML,
// as Windows writes it) in System32\Tasks names the script its Exec
// action runs, in the task's working folder.
func TestScheduledTaskNamesItsScript(t *testing.T) {
	tasks := filepath.Join(os.Getenv("SystemRoot"), "System32", "Tasks")
	if err := os.MkdirAll(tasks, 0o755); err != nil {
		t.Skipf("the tasks folder cannot be written here: %v", err)
	}
	d := workDir(t)
	script := filepath.Join(d, "backup.py")
	if err := os.WriteFile(script, []byte("print(1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	xml := `<?xml version="1.0" encoding="UTF-16"?><Task><Actions Context="Author"><Exec><Command>pythonw.exe</Command><Arguments>backup.py --quiet</Arguments><WorkingDirectory>` + d + `</WorkingDirectory></Exec></Actions></Task>`
	b := []byte{0xff, 0xfe}
	for _, c := range utf16.Encode([]rune(xml)) {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	task := filepath.Join(tasks, "HearthTestBackup")
	if err := os.WriteFile(task, b, 0o644); err != nil {
		t.Skipf("the tasks folder cannot be written here: %v", err)
	}
	t.Cleanup(func() { os.Remove(task) })
	x := newIndex(t)
	h, ok := x.Match(script)
	if !ok || h.Entry.Kind != startup.KindTask || h.Entry.Name != "HearthTestBackup" {
		t.Fatalf("the task's script: %+v %v", h, ok)
	}
}
