package tray

import (
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/peeruser"
)

// When askDirEnv is set, this test binary is a program that asks a
// control endpoint: it POSTs the request askReqEnv to the endpoint
// published in that data directory with its secret and writes the answer's
// status code to the file askOutEnv. With askParentEnv it first waits (up
// to 10 s) until that pid is its parent: a grandchild whose parent exited
// waits to be re-parented.
const (
	askDirEnv    = "TRAY_TEST_ASK_DIR"
	askReqEnv    = "TRAY_TEST_ASK_REQ"
	askOutEnv    = "TRAY_TEST_ASK_OUT"
	askParentEnv = "TRAY_TEST_ASK_PARENT"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(askDirEnv); dir != "" {
		os.Exit(askAsChild(dir))
	}
	os.Exit(m.Run())
}

func askAsChild(dir string) int {
	if p, err := strconv.Atoi(os.Getenv(askParentEnv)); err == nil {
		for deadline := time.Now().Add(10 * time.Second); os.Getppid() != p && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
	}
	out := os.Getenv(askOutEnv)
	info, err := readControl(dir)
	if err != nil {
		os.WriteFile(out, []byte(err.Error()), 0o600)
		return 2
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+info.Addr+"/"+os.Getenv(askReqEnv), nil)
	req.Header.Set("Authorization", "Bearer "+info.Secret)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		os.WriteFile(out, []byte(err.Error()), 0o600)
		return 2
	}
	resp.Body.Close()
	os.WriteFile(out, []byte(strconv.Itoa(resp.StatusCode)), 0o600)
	return 0
}

// startRealControl serves a control endpoint with the real caller check
// (StartedByHearth nil); it counts quits and minted login URLs.
func startRealControl(t *testing.T) (dir string, quits, minted *atomic.Int32) {
	t.Helper()
	dir = t.TempDir()
	quits, minted = &atomic.Int32{}, &atomic.Int32{}
	c := &Endpoint{
		Open: func() error { return nil },
		Quit: func() { quits.Add(1) },
		Login: func() (string, error) {
			minted.Add(1)
			return "http://127.0.0.1:3001/login?token=abc", nil
		},
	}
	if err := c.Listen(dir); err != nil {
		t.Fatal(err)
	}
	go c.Serve()
	t.Cleanup(func() { c.Close() })
	return dir, quits, minted
}

// waitAnswer waits for the asking program's answer in out.
func waitAnswer(t *testing.T, out string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(out); err == nil && len(b) > 0 {
			return string(b)
		}
	}
	t.Fatal("the asking program gave no answer")
	return ""
}

func askEnv(dir, req, out string) []string {
	return append(os.Environ(), askDirEnv+"="+dir, askReqEnv+"="+req, askOutEnv+"="+out)
}

// TestControlRefusesProgramStartedByHearth: a real child process of this
// process (standing for Hearth) that read the secret still gets 403 for
// login and quit, and neither is carried out. This is what keeps a
// program the model runs through Hearth from an operator login.
func TestControlRefusesProgramStartedByHearth(t *testing.T) {
	dir, quits, minted := startRealControl(t)
	for _, req := range []string{ReqLogin, ReqQuit} {
		out := filepath.Join(t.TempDir(), "answer")
		child := exec.Command(os.Args[0], "-test.run=^$")
		child.Env = askEnv(dir, req, out)
		child.Stderr = os.Stderr
		if err := child.Run(); err != nil {
			t.Fatalf("%s: the asking child: %v", req, err)
		}
		if got := waitAnswer(t, out); got != "403" {
			t.Fatalf("%s from a child of Hearth: %s, want 403", req, got)
		}
	}
	if minted.Load() != 0 || quits.Load() != 0 {
		t.Fatalf("refused requests were carried out: minted %d, quits %d", minted.Load(), quits.Load())
	}
}

// TestControlRefusesHearthsOwnProcess: Hearth's own process asking is
// refused too (Hearth never asks itself; nothing Hearth runs in-process
// may reach a login).
func TestControlRefusesHearthsOwnProcess(t *testing.T) {
	dir, quits, minted := startRealControl(t)
	if u, err := AskLogin(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("login from Hearth's own process: %q %v, want 403", u, err)
	}
	if err := Ask(t.Context(), dir, ReqQuit); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("quit from Hearth's own process: %v, want 403", err)
	}
	if minted.Load() != 0 || quits.Load() != 0 {
		t.Fatalf("refused requests were carried out: minted %d, quits %d", minted.Load(), quits.Load())
	}
}

// TestControlRefusesOrphanedGrandchild (Linux): a program that leaves its
// parent (sh backgrounds it and exits) is re-parented to the subreaper,
// this process, and is still refused. Without AdoptOrphans it would be
// re-parented outside this process's tree and be served.
func TestControlRefusesOrphanedGrandchild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("child subreapers are Linux's")
	}
	if err := peeruser.AdoptOrphans(); err != nil {
		t.Fatal(err)
	}
	dir, _, minted := startRealControl(t)
	out := filepath.Join(t.TempDir(), "answer")
	sh := exec.Command("/bin/sh", "-c", `"$0" -test.run='^$' </dev/null >/dev/null 2>&1 &`, os.Args[0])
	sh.Env = append(askEnv(dir, ReqLogin, out), askParentEnv+"="+strconv.Itoa(os.Getpid()))
	if err := sh.Run(); err != nil {
		t.Fatal(err)
	}
	if got := waitAnswer(t, out); got != "403" {
		t.Fatalf("login from an orphaned grandchild: %s, want 403", got)
	}
	if minted.Load() != 0 {
		t.Fatalf("minted %d login URLs for a refused caller", minted.Load())
	}
}

// TestControlLoginFailsClosed: when the caller's process cannot be
// identified, login is refused and quit is served (uninstall must be able
// to stop Hearth).
func TestControlLoginFailsClosed(t *testing.T) {
	dir := t.TempDir()
	var quits, minted atomic.Int32
	c := &Endpoint{
		Open: func() error { return nil },
		Quit: func() { quits.Add(1) },
		Login: func() (string, error) {
			minted.Add(1)
			return "http://127.0.0.1:3001/login?token=abc", nil
		},
		StartedByHearth: func(netip.AddrPort, netip.AddrPort) (bool, error) {
			return false, fmt.Errorf("find the calling process: %w", peeruser.ErrNotFound)
		},
	}
	if err := c.Listen(dir); err != nil {
		t.Fatal(err)
	}
	go c.Serve()
	defer c.Close()
	if u, err := AskLogin(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("login from an unidentified caller: %q %v, want 403", u, err)
	}
	if err := Ask(t.Context(), dir, ReqQuit); err != nil {
		t.Fatalf("quit from an unidentified caller: %v", err)
	}
	if minted.Load() != 0 || quits.Load() != 1 {
		t.Fatalf("minted %d, quits %d; want 0 and 1", minted.Load(), quits.Load())
	}
}
