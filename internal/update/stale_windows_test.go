package update

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/instance"
)

// TestStalePreviousProgramHeldOpen: a hearth-tray.previous.exe from an
// earlier update that another program holds open (no delete sharing: an
// antivirus scan, a running copy) can be neither removed nor renamed; the
// update goes on, the running program aside under
// hearth-tray.previous.exe.1, and the .failed leftover of an earlier
// rollback is removed once the new version is healthy.
func TestStalePreviousProgramHeldOpen(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	selfBytes, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "Programs", "Hearth")
	data := t.TempDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, ProgramName())
	if err := os.WriteFile(exe, selfBytes, 0o755); err != nil {
		t.Fatal(err)
	}
	stale := previousName(exe)
	if err := os.WriteFile(stale, []byte("an earlier version"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, _ := windows.UTF16PtrFromString(stale)
	held, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(held)
	if err := os.Remove(stale); err == nil {
		t.Fatal("the held file could be removed: the test proves nothing here")
	}
	failed := exe + ".failed"
	if err := os.WriteFile(failed, []byte("a version that rolled back"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := exec.Command(exe)
	old.Dir = dir
	old.Env = append(os.Environ(), fakeRoleEnv+"=sleep")
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { old.Process.Kill(); old.Wait() })
	newBytes := append(append([]byte(nil), selfBytes...), []byte("new version")...)
	staged := filepath.Join(data, "staged-new")
	if err := os.WriteFile(staged, newBytes, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), fakeRoleEnv+"=healthy", "HEARTH_HOME="+data, "HEARTH_UPDATE_FAKE_VERSION=1.1.0")
	o := Apply(context.Background(), Plan{From: "1.0.0", To: "1.1.0", NewExe: staged}, Handoff{
		Exe: exe, Env: env, DataDir: data, ConfigPath: filepath.Join(data, "config.json"), HealthWithin: 60 * time.Second,
	})
	if info, err := instance.ReadInfo(data); err == nil {
		t.Cleanup(func() {
			if p, err := os.FindProcess(info.PID); err == nil {
				p.Kill()
			}
		})
	}
	if o.Result != ResultUpdated {
		t.Fatalf("outcome: %+v", o)
	}
	if got, _ := os.ReadFile(exe); !bytes.Equal(got, newBytes) {
		t.Fatal("the new program is not in place")
	}
	if got, err := os.ReadFile(stale + ".1"); err != nil || !bytes.Equal(got, selfBytes) {
		t.Fatalf("the running program is not aside as %s.1: %v", filepath.Base(stale), err)
	}
	if _, err := os.Stat(failed); err == nil {
		t.Fatal("the .failed leftover is still there")
	}
}
