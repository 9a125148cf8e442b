package session

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/hearth-dev/hearth/internal/primitive"
)

// TestWindowsSessionOrAClearRefusal talks to cmd.exe on a pseudo-console
// where this Windows has ConPTY; where it has none (an old Windows, a Wine
// without it), session_start must say so plainly and hold no slot.
func TestWindowsSessionOrAClearRefusal(t *testing.T) {
	e := newEnv(t, nil)
	info, err := e.m.StartSession(context.Background(), convA, StartInput{Command: "cmd.exe", Args: []string{"/q"}})
	if avail := available(); avail != nil {
		if !errors.Is(avail, ErrUnavailable) || err == nil || primitive.AsError(err).Code != "unavailable" || primitive.AsError(err).State != primitive.StateBlocked || !strings.Contains(err.Error(), "ConPTY") {
			t.Fatalf("without ConPTY: available %v, start %v", avail, err)
		}
		if e.m.Count() != 0 {
			t.Fatal("a refused start holds a slot")
		}
		t.Skipf("no usable ConPTY here; session_start answered: %v", err)
	}
	if err != nil {
		t.Fatalf("start cmd.exe on a pseudo-console: %v", err)
	}
	sent := e.send(info.SessionID, "set /a 6*7", "Enter")
	e.readUntil(info.SessionID, sent.Offset, "42")
	c, err := e.m.Close(context.Background(), convA, info.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Killed || c.Transcript == nil {
		t.Fatalf("close: %+v", c)
	}
}

// TestWindowsSessionExitCode: a program that exits on its own reports its
// exit code, and its output ends.
func TestWindowsSessionExitCode(t *testing.T) {
	if err := available(); err != nil {
		t.Skipf("no ConPTY here: %v", err)
	}
	e := newEnv(t, nil)
	info := e.start("cmd.exe", "/c", "echo done& exit /b 7")
	off := int64(0)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		r, err := e.m.Read(context.Background(), convA, ReadInput{SessionID: info.SessionID, Offset: &off, WaitMS: 1000})
		if err != nil {
			t.Fatal(err)
		}
		off = r.NextOffset
		if r.Exited {
			if *r.ExitCode != 7 {
				t.Fatalf("exit code %d, want 7", *r.ExitCode)
			}
			return
		}
	}
	t.Fatal("cmd /c never exited")
}

// helperEnv makes the test binary a program for the sessions to run:
// "sleep" sleeps a minute; "tree" starts a sleeping copy of itself,
// writes its pid to the file named by helperPidfile, and sleeps.
const (
	helperEnv     = "HEARTH_SESSION_TEST_HELPER"
	helperPidfile = "HEARTH_SESSION_TEST_PIDFILE"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "sleep":
		time.Sleep(time.Minute)
		os.Exit(0)
	case "tree":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), helperEnv+"=sleep")
		if err := child.Start(); err != nil {
			os.Exit(2)
		}
		if err := os.WriteFile(os.Getenv(helperPidfile), []byte(strconv.Itoa(child.Process.Pid)), 0o600); err != nil {
			os.Exit(3)
		}
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestConPTYMechanics exercises the pseudo-console code where
// CreatePseudoConsole exists, Wine's half-working one included: a program
// started on it reports its exit code and its output ends, and Kill ends
// its whole tree (the Job Object) at once.
func TestConPTYMechanics(t *testing.T) {
	if err := procCreatePseudoConsole.Find(); err != nil {
		t.Skipf("no CreatePseudoConsole: %v", err)
	}
	ctx := context.Background()
	spec := startSpec{Command: "cmd.exe", Args: []string{"/c", "exit 7"}, Cols: 80, Rows: 25}
	term, err := startConPTY(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(io.Discard, term)
	}()
	if code := term.Wait(); code != 7 {
		t.Fatalf("cmd /c exit 7 exited %d", code)
	}
	select {
	case <-drained:
	case <-time.After(10 * time.Second):
		t.Fatal("the output did not end after the program exited")
	}
	term.Close()

	pidfile := filepath.Join(t.TempDir(), "pid")
	tree, err := startConPTY(ctx, startSpec{Command: os.Args[0], Env: map[string]string{helperEnv: "tree", helperPidfile: pidfile}, Cols: 80, Rows: 25})
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	go func() { _, _ = io.Copy(io.Discard, tree) }()
	var grandchild int
	for deadline := time.Now().Add(30 * time.Second); grandchild == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the helper never wrote its child's pid")
		}
		b, _ := os.ReadFile(pidfile)
		grandchild, _ = strconv.Atoi(string(b))
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(grandchild))
	if err != nil {
		t.Fatalf("open the grandchild %d: %v", grandchild, err)
	}
	defer windows.CloseHandle(h)
	waited := make(chan int, 1)
	go func() { waited <- tree.Wait() }()
	if err := tree.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("the killed program still runs")
	}
	if ev, err := windows.WaitForSingleObject(h, 10_000); err != nil || ev != windows.WAIT_OBJECT_0 {
		t.Fatalf("the grandchild survived the kill: %d %v", ev, err)
	}
}
