package backup

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/instance"
)

const lockHolderEnv = "HEARTH_BACKUP_TEST_HOLD_LOCK"

// TestMain lets the test binary be the lock holder of
// TestRestoreRefusedWhileRunning: a separate process holding the Hearth
// instance lock of a data directory, as a running Hearth does, until its
// standard input closes.
func TestMain(m *testing.M) {
	if dir := os.Getenv(lockHolderEnv); dir != "" {
		l, err := instance.Acquire(instance.LockHearth, dir)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type lockHolder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func startLockHolder(t *testing.T, dir string) *lockHolder {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), lockHolderEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &lockHolder{cmd: cmd, stdin: stdin}
	t.Cleanup(func() { h.stop(t) })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case s := <-line:
		if s != "locked" {
			t.Fatalf("lock holder: %q", s)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("lock holder did not take the lock within a minute")
	}
	return h
}

func (h *lockHolder) stop(t *testing.T) {
	if h.cmd.Process == nil || h.cmd.ProcessState != nil {
		return
	}
	h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		t.Errorf("lock holder: %v", err)
	}
}
