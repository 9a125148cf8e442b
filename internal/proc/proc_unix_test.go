//go:build !windows

package proc

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// alive reports whether pid exists and is not a zombie. A killed
// grandchild is reparented and may linger as a zombie when the reaper
// (PID 1 in a container) is slow or never reaps; it is dead all the same.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) || !dirExists("/proc/self")
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func sh(t *testing.T, script string, args ...string) Spec {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	return Spec{Command: "sh", Args: append([]string{"-c", script, "sh"}, args...)}
}

// TestShellTimeoutKillsGrandchild is the shape the brief of this package
// names: a shell that backgrounds a sleep and then sleeps itself.
func TestShellTimeoutKillsGrandchild(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	s := sh(t, `sleep 30 & echo $! > "$1"; sleep 30`, pidfile)
	s.Timeout = 500 * time.Millisecond
	res := run(t, s)
	if !res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("timedOut %v exit %d; want true -1", res.TimedOut, res.ExitCode)
	}
	if res.Duration >= s.Timeout+PipeGrace {
		t.Errorf("Run took %v: it waited for the grandchild's pipe", res.Duration)
	}
	assertGone(t, readPID(t, pidfile))
}

// TestTimeoutKillsDescendantThatLeftGroup: a descendant that called setsid
// is outside the process group but still in the tree; the kill finds it
// by walking the process table.
func TestTimeoutKillsDescendantThatLeftGroup(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	pidfile := filepath.Join(t.TempDir(), "pid")
	s := sh(t, `setsid sh -c "echo \$\$ > \"$1\"; exec sleep 30" & sleep 30`, pidfile)
	s.Timeout = time.Second
	res := run(t, s)
	if !res.TimedOut {
		t.Fatalf("timedOut %v; want true", res.TimedOut)
	}
	assertGone(t, readPID(t, pidfile))
}

// TestEscapedProcessCannotHangRun: a daemon that double-forked out of both
// the group and the tree survives (nothing can find it), but even though
// it holds stdout, Run returns once PipeGrace has passed.
func TestEscapedProcessCannotHangRun(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	pidfile := filepath.Join(t.TempDir(), "pid")
	s := sh(t, `(setsid sh -c "echo \$\$ > \"$1\"; exec sleep 30" &); sleep 30`, pidfile)
	s.Timeout = 500 * time.Millisecond
	res := run(t, s)
	t.Cleanup(func() {
		if pid := readPID(t, pidfile); alive(pid) {
			_ = Kill(pid, false)
		}
	})
	if !res.TimedOut {
		t.Fatalf("timedOut %v; want true", res.TimedOut)
	}
	if limit := s.Timeout + PipeGrace + 3*time.Second; res.Duration > limit {
		t.Errorf("Run took %v, want under %v", res.Duration, limit)
	}
}

// TestShellLeftoversKilledAfterExit: a shell that exits leaving a background
// job behind returns at once, and the job is killed.
func TestShellLeftoversKilledAfterExit(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	s := sh(t, `sleep 30 & echo $! > "$1"; echo done`, pidfile)
	res := run(t, s)
	if res.ExitCode != 0 || res.TimedOut || string(res.Stdout) != "done\n" {
		t.Fatalf("exit %d timedOut %v stdout %q", res.ExitCode, res.TimedOut, res.Stdout)
	}
	if res.Duration >= PipeGrace {
		t.Errorf("Run took %v: it waited for the leftover's pipe", res.Duration)
	}
	assertGone(t, readPID(t, pidfile))
}

func TestKillNotFound(t *testing.T) {
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skip("no true:", err)
	}
	if err := Kill(c.Process.Pid, true); !errors.Is(err, ErrNotFound) {
		t.Errorf("Kill of an exited pid: %v, want ErrNotFound", err)
	}
}

func TestDecodeLatin1Fallback(t *testing.T) {
	if text, enc := Decode([]byte("caf\xE9 cr\xE8me")); text != "café crème" || enc != "latin-1" {
		t.Errorf("Decode = %q, %q; want Latin-1", text, enc)
	}
}

func BenchmarkRunTrue(b *testing.B) {
	if _, err := exec.LookPath("true"); err != nil {
		b.Skip("no true")
	}
	for b.Loop() {
		if _, err := Run(b.Context(), Spec{Command: "true"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecCommandTrue(b *testing.B) {
	if _, err := exec.LookPath("true"); err != nil {
		b.Skip("no true")
	}
	for b.Loop() {
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
