package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/instance"
	"github.com/hearth-dev/hearth/internal/selftest"
	"github.com/hearth-dev/hearth/internal/tray"
)

// asMainEnv makes the test binary act as hearth-tray itself, so that the
// tests can run `hearth-tray ensure` as real processes where no Go
// toolchain exists to build the program (a Windows test binary under
// Wine). Each start without arguments (what ensure starts: the tray, or
// serve off Windows) appends its pid to startsFile in HEARTH_HOME first.
const (
	asMainEnv  = "HEARTH_TRAY_TEST_AS_MAIN"
	startsFile = "test-starts.txt"
)

func TestMain(m *testing.M) {
	// The selftest's fixture children are this binary too (run routes
	// them to selftest.Child).
	if os.Getenv(asMainEnv) == "" && os.Getenv(selftest.ChildEnv) == "" {
		os.Exit(m.Run())
	}
	if len(os.Args) == 1 {
		f, err := os.OpenFile(filepath.Join(os.Getenv("HEARTH_HOME"), startsFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hearth-tray:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// asMain runs this test binary as `hearth-tray args...` on home.
func asMain(home string, args ...string) *exec.Cmd {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "HEARTH_HOME="+home, "HEARTH_CONFIG=")
	return cmd
}

var startedRE = regexp.MustCompile(`Started Hearth \(pid (\d+)\)`)

// TestEnsureStartsOneInstance runs `hearth-tray ensure` twice at once on a
// fresh data directory: both succeed, exactly one process is started, and
// it is the one running Hearth (serve off Windows, the tray on Windows); a
// later ensure finds it running. The instance is then stopped: on Windows
// through the tray's control endpoint (as uninstall does), elsewhere with
// SIGINT.
func TestEnsureStartsOneInstance(t *testing.T) {
	home := t.TempDir()
	cfg := config.Default()
	cfg.MCPAddr, cfg.PanelAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Roots = []string{t.TempDir()}
	// host_info below must answer inline on a loaded machine (under Wine).
	cfg.DispatchInlineBudgetMS = hearthtest.TestInlineBudgetMS
	if err := config.Write(filepath.Join(home, "config.json"), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopInstance(t, home) })

	outs := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			var b bytes.Buffer
			cmd := asMain(home, "ensure")
			cmd.Stdout, cmd.Stderr = &b, &b
			errs[i] = cmd.Run()
			outs[i] = b.String()
		})
	}
	wg.Wait()
	pid := 0
	for i := range 2 {
		if errs[i] != nil {
			t.Fatalf("ensure %d: %v\n%s", i, errs[i], outs[i])
		}
		if m := startedRE.FindStringSubmatch(outs[i]); m != nil {
			if pid != 0 {
				t.Fatalf("both ensures started Hearth:\n%s\n%s", outs[0], outs[1])
			}
			pid, _ = strconv.Atoi(m[1])
		} else if !strings.Contains(outs[i], "already running") && !strings.Contains(outs[i], "being started") {
			t.Fatalf("ensure %d said: %q", i, outs[i])
		}
	}
	if pid == 0 {
		t.Fatalf("no ensure started Hearth:\n%s\n%s", outs[0], outs[1])
	}
	info, err := instance.ReadInfo(home)
	if err != nil || info.PID != pid {
		t.Fatalf("instance.json: %+v %v, want pid %d", info, err, pid)
	}
	if starts := readStarts(t, home); len(starts) != 1 || starts[0] != pid {
		t.Fatalf("processes started: %v, want exactly [%d]", starts, pid)
	}
	// It is a working Hearth.
	c := hearthtest.Connect(t, info.MCPURL, "ensure")
	if r := c.Call("machine", map[string]any{"operation": "host_info"}); r.State() != "completed" {
		t.Fatalf("host_info: %s", r.Raw)
	}
	var b bytes.Buffer
	cmd := asMain(home, "ensure")
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Run(); err != nil || !strings.Contains(b.String(), fmt.Sprintf("already running (pid %d)", pid)) {
		t.Fatalf("third ensure: %v %q", err, b.String())
	}
	stopInstance(t, home)
	// The tray (Windows) logs whether it got its icon; show it.
	if b, err := os.ReadFile(filepath.Join(home, "logs", "tray.log")); err == nil {
		t.Logf("tray.log:\n%s", b)
	}
	if starts := readStarts(t, home); len(starts) != 1 {
		t.Fatalf("processes started: %v", starts)
	}
	if _, err := os.Stat(filepath.Join(home, instance.InfoFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("instance.json after a clean stop: %v", err)
	}
}

func readStarts(t *testing.T, home string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, startsFile))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, n)
	}
	return pids
}

// stopInstance stops the Hearth running on home, if any, and waits until
// its instance lock is free.
func stopInstance(t *testing.T, home string) {
	t.Helper()
	l, err := instance.Acquire("hearth", home)
	if err == nil {
		l.Release()
		return
	}
	info, _ := instance.ReadInfo(home)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tray.Ask(ctx, home, tray.ReqQuit); err != nil {
		if !errors.Is(err, tray.ErrNoTray) {
			t.Errorf("ask Hearth to quit: %v", err)
		}
		// A headless serve (off Windows): interrupt it as Ctrl-C would.
		if p, ferr := os.FindProcess(info.PID); ferr == nil && info.PID > 0 {
			if serr := p.Signal(os.Interrupt); serr != nil {
				t.Errorf("interrupt pid %d: %v (after %v)", info.PID, serr, err)
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		l, err := instance.Acquire("hearth", home)
		if err == nil {
			l.Release()
			return
		}
		if time.Now().After(deadline) {
			if p, ferr := os.FindProcess(info.PID); ferr == nil && info.PID > 0 {
				p.Kill()
			}
			t.Fatalf("Hearth (pid %d) did not stop: %v", info.PID, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
