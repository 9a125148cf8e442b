package instance

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the "other process": with childEnv set it
// acts out one role instead of running the tests.
const (
	childEnv    = "HEARTH_INSTANCE_TEST_CHILD"
	childDirEnv = "HEARTH_INSTANCE_TEST_DIR"

	exitGotLock        = 0
	exitAlreadyRunning = 3
	exitOtherError     = 4
)

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "try":
		// Try once, report through the exit code.
		l, err := Acquire("hearth", os.Getenv(childDirEnv))
		switch {
		case errors.Is(err, ErrAlreadyRunning):
			os.Exit(exitAlreadyRunning)
		case err != nil:
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(exitOtherError)
		}
		l.Release()
		os.Exit(exitGotLock)
	case "hold":
		// Take the lock, say so, and hold it until stdin closes.
		dir := os.Getenv(childDirEnv)
		l, err := Acquire("hearth", dir)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(exitOtherError)
		}
		if err := WriteInfo(dir, Info{PID: os.Getpid(), MCPURL: "http://127.0.0.1:3000/mcp", PanelURL: "http://127.0.0.1:3001/"}); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(exitOtherError)
		}
		os.Stdout.WriteString("locked\n")
		io.Copy(io.Discard, os.Stdin)
		// Exit without Release: the OS must drop the lock. KeepAlive stops
		// a finalizer from closing the lock file early.
		runtime.KeepAlive(l)
		os.Exit(0)
	}
	os.Exit(exitOtherError)
}

func child(t *testing.T, role, dir string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role, childDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

// tryInChild runs a second process that tries to take the lock and
// returns its exit code.
func tryInChild(t *testing.T, dir string) int {
	t.Helper()
	err := child(t, "try", dir).Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return exitGotLock
}

func TestSecondProcessSeesAlreadyRunning(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire("hearth", dir)
	if err != nil {
		t.Fatal(err)
	}
	if code := tryInChild(t, dir); code != exitAlreadyRunning {
		t.Fatalf("second process exit code = %d, want %d (ErrAlreadyRunning)", code, exitAlreadyRunning)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if code := tryInChild(t, dir); code != exitGotLock {
		t.Fatalf("after Release, second process exit code = %d, want %d (got the lock)", code, exitGotLock)
	}
}

// TestLockDiesWithHolder checks that a holder that exits without releasing
// (as a crash would) leaves no stale lock, and that a second start can read
// the first instance's addresses while it runs.
func TestLockDiesWithHolder(t *testing.T) {
	dir := t.TempDir()
	holder := child(t, "hold", dir)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })

	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		if strings.TrimSpace(line) != "locked" {
			t.Fatalf("holder said %q, want locked", line)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("holder did not take the lock within 60s")
	}

	if _, err := Acquire("hearth", dir); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("Acquire while another process holds the lock: err = %v, want ErrAlreadyRunning", err)
	}
	info, err := ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.PID != holder.Process.Pid || info.PanelURL != "http://127.0.0.1:3001/" || info.MCPURL != "http://127.0.0.1:3000/mcp" {
		t.Fatalf("ReadInfo = %+v, want the holder's info (pid %d)", info, holder.Process.Pid)
	}

	stdin.Close()
	if err := holder.Wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	l, err := Acquire("hearth", dir)
	if err != nil {
		t.Fatalf("Acquire after the holder exited: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestSameProcessTwice(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire("hearth", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := Acquire("hearth", dir); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second Acquire in one process: err = %v, want ErrAlreadyRunning", err)
	}
}

func TestSeparateDataDirsAndNames(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	la, err := Acquire("hearth", a)
	if err != nil {
		t.Fatal(err)
	}
	defer la.Release()
	lb, err := Acquire("hearth", b)
	if err != nil {
		t.Fatalf("Acquire in another data directory: %v", err)
	}
	defer lb.Release()
	lc, err := Acquire("other", a)
	if err != nil {
		t.Fatalf("Acquire of another name: %v", err)
	}
	defer lc.Release()
}

func TestInfoRoundTripAndRelease(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadInfo(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadInfo with no file: err = %v, want ErrNotExist", err)
	}
	l, err := Acquire("hearth", dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Info{PID: os.Getpid(), MCPURL: "http://127.0.0.1:3000/mcp", PanelURL: "http://127.0.0.1:3001/login?t=x"}
	if err := WriteInfo(dir, want); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadInfo(dir); err != nil || got != want {
		t.Fatalf("ReadInfo = %+v, %v; want %+v", got, err, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, InfoFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"pid"`, `"mcp_url"`, `"panel_url"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("instance.json lacks %s: %s", key, b)
		}
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, InfoFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("instance.json still exists after Release: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".instance-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestInvalidNames(t *testing.T) {
	for _, name := range []string{"", `a\b`, "a/b", "a b", strings.Repeat("x", 33)} {
		if l, err := Acquire(name, t.TempDir()); err == nil {
			l.Release()
			t.Errorf("Acquire(%q) succeeded", name)
		}
	}
}

// TestHeld: Held sees a lock another process holds, sees it gone once that
// process exits, and creates nothing where nobody ever held the lock.
func TestHeld(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home")
	if held, err := Held("hearth", dir); err != nil || held {
		t.Fatalf("Held with no data directory = %v, %v; want false", held, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Held created the data directory: %v", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if held, err := Held("hearth", dir); err != nil || held {
		t.Fatalf("Held on an empty data directory = %v, %v; want false", held, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("Held created %s in the data directory", entries[0].Name())
	}

	holder := child(t, "hold", dir)
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		if strings.TrimSpace(line) != "locked" {
			t.Fatalf("holder said %q, want locked", line)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("holder did not take the lock within 60s")
	}
	for range 3 {
		if held, err := Held("hearth", dir); err != nil || !held {
			t.Fatalf("Held while another process holds the lock = %v, %v; want true", held, err)
		}
	}
	if held, err := Held("other", dir); err != nil || held {
		t.Fatalf("Held of another name = %v, %v; want false", held, err)
	}
	// Held took nothing that outlives it: the holder still has the lock,
	// and once it exits the lock is free.
	if _, err := Acquire("hearth", dir); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("Acquire after Held, holder alive: err = %v, want ErrAlreadyRunning", err)
	}
	stdin.Close()
	if err := holder.Wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	if held, err := Held("hearth", dir); err != nil || held {
		t.Fatalf("Held after the holder exited = %v, %v; want false", held, err)
	}
	l, err := Acquire("hearth", dir)
	if err != nil {
		t.Fatalf("Acquire after Held, holder gone: %v", err)
	}
	defer l.Release()
	if held, err := Held("hearth", dir); err != nil || !held {
		t.Fatalf("Held while this process holds the lock = %v, %v; want true", held, err)
	}
	if _, err := Held("a/b", dir); err == nil {
		t.Fatal("Held accepted an invalid name")
	}
}
