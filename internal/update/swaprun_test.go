package update

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/instance"
)

// TestSwapRunningProgram: the hand-over on this platform's file system
// with real processes (on Windows it runs under Wine too, see
// scripts/test-windows): the old program's file is renamed aside while
// it runs, the new one is moved into its name and started, and a new
// version that becomes healthy stays; one that exits at once is rolled
// back, its file moved out and the previous one back in its name.
func TestSwapRunningProgram(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	selfBytes, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		role   string
		result string
	}{{"healthy", ResultUpdated}, {"exit", ResultRolledBack}} {
		t.Run(tc.role, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "Programs", "Hearth")
			data := t.TempDir()
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			exe := filepath.Join(dir, ProgramName())
			if err := os.WriteFile(exe, selfBytes, 0o755); err != nil {
				t.Fatal(err)
			}
			// The old program runs from its file during the swap.
			old := exec.Command(exe)
			old.Dir = dir
			old.Env = append(os.Environ(), fakeRoleEnv+"=sleep")
			if err := old.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { old.Process.Kill(); old.Wait() })
			// The new program: the same binary with bytes appended, so
			// that the two files differ.
			newBytes := append(append([]byte(nil), selfBytes...), []byte("new version")...)
			staged := filepath.Join(data, "staged-new")
			if err := os.WriteFile(staged, newBytes, 0o755); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), fakeRoleEnv+"="+tc.role, "HEARTH_HOME="+data, "HEARTH_UPDATE_FAKE_VERSION=1.1.0")
			o := Apply(context.Background(), Plan{From: "1.0.0", To: "1.1.0", NewExe: staged}, Handoff{
				Exe: exe, Env: env, DataDir: data, ConfigPath: filepath.Join(data, "config.json"), HealthWithin: 30 * time.Second,
			})
			if o.Result != tc.result {
				t.Fatalf("outcome: %+v", o)
			}
			got, err := os.ReadFile(exe)
			if err != nil {
				t.Fatal(err)
			}
			switch tc.role {
			case "healthy":
				info, err := instance.ReadInfo(data)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if p, err := os.FindProcess(info.PID); err == nil {
						p.Kill()
					}
				})
				if !bytes.Equal(got, newBytes) {
					t.Fatal("the new program is not in the old one's name")
				}
				if prev, err := os.ReadFile(previousName(exe)); err != nil || !bytes.Equal(prev, selfBytes) {
					t.Fatalf("the previous program is not beside it: %v", err)
				}
			case "exit":
				if !bytes.Equal(got, selfBytes) {
					t.Fatal("the previous program did not come back")
				}
				if !strings.Contains(o.Detail, "stopped at once") || !strings.Contains(o.Detail, "cannot start") {
					t.Fatalf("detail: %s", o.Detail)
				}
			}
		})
	}
}
