package tunnel

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/secrets"
)

// The test binary doubles as two helper programs:
//   - with selfFakeEnv=1 and a tunnel-client command as first argument it
//     is a minimal fake tunnel-client (used where the testdata fake cannot
//     be built: the Windows tests run under Wine have no go command);
//   - with helperEnv=1 it is a "Hearth" that supervises a fake and prints
//     the fake's pid, so a test can kill it and watch the fake die with it.
const (
	selfFakeEnv = "HEARTH_TUNNEL_TEST_FAKE"
	helperEnv   = "HEARTH_TUNNEL_TEST_HELPER"
	// helperClientEnv and helperDataEnv configure the helper.
	helperClientEnv = "HEARTH_TUNNEL_TEST_CLIENT"
	helperDataEnv   = "HEARTH_TUNNEL_TEST_DATA"
	helperKey       = "sk-helper-0123456789abcdef"
)

var fakeBuild struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	if os.Getenv(selfFakeEnv) == "1" && len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		os.Exit(selfFake(os.Args[1:]))
	}
	if os.Getenv(helperEnv) == "1" {
		os.Exit(hearthHelper())
	}
	code := m.Run()
	if fakeBuild.dir != "" {
		os.RemoveAll(fakeBuild.dir)
	}
	os.Exit(code)
}

// fakeClient builds testdata/faketunnel as tunnel-client (once per test
// binary) and returns its path; the test is skipped without a go command.
func fakeClient(t *testing.T) string {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the fake tunnel-client")
	}
	fakeBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "faketunnel")
		if err != nil {
			fakeBuild.err = err
			return
		}
		fakeBuild.dir = dir
		out := filepath.Join(dir, ClientName())
		cmd := exec.Command(gocmd, "build", "-o", out, "./testdata/faketunnel")
		if b, err := cmd.CombinedOutput(); err != nil {
			fakeBuild.err = fmt.Errorf("build fake tunnel-client: %v\n%s", err, b)
			return
		}
		fakeBuild.path = out
	})
	if fakeBuild.err != nil {
		t.Fatal(fakeBuild.err)
	}
	return fakeBuild.path
}

// memStore is an in-memory secrets.Store, so that no key is ever written
// under the data directory the tests scan.
type memStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newMemStore() *memStore { return &memStore{m: map[string][]byte{}} }

func (s *memStore) Set(name string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[name] = bytes.Clone(b)
	return nil
}

func (s *memStore) Get(name string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[name]
	if !ok {
		return nil, secrets.ErrNotFound
	}
	return bytes.Clone(b), nil
}

func (s *memStore) Delete(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[name]; !ok {
		return secrets.ErrNotFound
	}
	delete(s.m, name)
	return nil
}

func (s *memStore) Present(name string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[name]
	return ok, nil
}

// fastTiming shortens every delay so that restarts and crash loops happen
// within a test.
func fastTiming() timing {
	t := defaultTiming()
	t.backoffMin, t.backoffMax = 20*time.Millisecond, 200*time.Millisecond
	t.healthyAfter = 30 * time.Second
	t.loopFailures, t.loopWindow = 10, time.Minute
	t.pollMin, t.pollMax = 10*time.Millisecond, 50*time.Millisecond
	t.startGrace = 400 * time.Millisecond
	t.stopGrace = 2 * time.Second
	t.setupTimeout = 10 * time.Second
	t.logMax, t.logKeep = 256<<10, 3
	return t
}

// lockedBuffer collects Hearth's own slog output for scanning.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fileSHA256 is the lowercase hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// pinned returns tunnel settings with client pinned (its path and hash
// as PinClient would save them); "" pins nothing.
func pinned(t *testing.T, client, tunnelID string) config.Tunnel {
	t.Helper()
	cfg := config.Tunnel{TunnelID: tunnelID, Profile: "hearth-local"}
	if client != "" {
		sum, err := fileSHA256(client)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ClientPath, cfg.ClientSHA256 = client, sum
	}
	return cfg
}

// newSupervisor returns a Supervisor over a fresh data directory with the
// given client (pinned), tunnel ID and key (any may be ""), fast timing
// and an in-memory secrets store. Stop runs at cleanup.
func newSupervisor(t *testing.T, client, tunnelID, key string) (*Supervisor, *memStore, *lockedBuffer) {
	t.Helper()
	return newSupervisorConfig(t, pinned(t, client, tunnelID), key)
}

// newSupervisorConfig is newSupervisor with the tunnel settings given.
func newSupervisorConfig(t *testing.T, cfg config.Tunnel, key string) (*Supervisor, *memStore, *lockedBuffer) {
	t.Helper()
	store := newMemStore()
	if key != "" {
		store.Set(KeyName, []byte(key))
	}
	logs := &lockedBuffer{}
	s := New(Options{
		Config:  cfg,
		DataDir: t.TempDir(),
		Secrets: store,
		Log:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	s.t = fastTiming()
	s.exeDir = t.TempDir()
	t.Cleanup(s.Stop)
	return s, store, logs
}

// waitFor waits until cond holds for the status and returns it.
func waitFor(t *testing.T, s *Supervisor, what string, timeout time.Duration, cond func(Status) bool) Status {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st := s.Status()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: status is %+v\nlog:\n%s", what, st, readLog(s))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func stateIs(want State) func(Status) bool {
	return func(st Status) bool { return st.State == want }
}

// readLog returns the tunnel log (all rotated parts, oldest first).
func readLog(s *Supervisor) string {
	var b strings.Builder
	for i := 5; i >= 1; i-- {
		if data, err := os.ReadFile(s.LogPath() + "." + strconv.Itoa(i)); err == nil {
			b.Write(data)
		}
	}
	data, _ := os.ReadFile(s.LogPath())
	b.Write(data)
	return b.String()
}

// waitDead waits until pid has exited.
func waitDead(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs", what, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// selfFake is the minimal fake tunnel-client: `init` records its
// arguments and working directory; `run` writes the health URL
// file, serves /readyz and a /metrics whose last successful poll is now,
// and exits on the graceful signal (unless
// FAKE_TUNNEL_HANG_ON_STOP=1); `sleep` sleeps (a grandchild).
func selfFake(args []string) int {
	switch args[0] {
	case "sleep":
		time.Sleep(time.Hour)
		return 0
	case "init":
		// What init was given and where it ran, for the test to read
		// (FAKE_TUNNEL_INIT_OUT names the file).
		wd, _ := os.Getwd()
		b, _ := json.Marshal(map[string]any{"args": args, "dir": wd})
		if err := os.WriteFile(os.Getenv("FAKE_TUNNEL_INIT_OUT"), b, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			return 1
		}
		fmt.Println("self fake: profile created")
		return 0
	case "run":
	default:
		fmt.Fprintln(os.Stderr, "self fake: unsupported command", args[0])
		return 2
	}
	var urlFile, listen string
	for i := 1; i+1 < len(args); i++ {
		switch args[i] {
		case "--health.url-file":
			urlFile = args[i+1]
		case "--health.listen-addr":
			listen = args[i+1]
		}
	}
	fmt.Printf("self fake: run pid=%d key_set=%v\n", os.Getpid(), os.Getenv(EnvKey) != "")
	if f := os.Getenv("FAKE_TUNNEL_CHILD_PID"); f != "" {
		child := exec.Command(os.Args[0], "sleep")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			return 1
		}
		os.WriteFile(f, []byte(strconv.Itoa(child.Process.Pid)), 0o600)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			// Every poll of the (absent) control plane succeeds.
			fmt.Fprintf(w, "%s %d\n", pollMetric, time.Now().Unix())
			return
		}
		fmt.Fprintln(w, "ok")
	}))
	if err := os.WriteFile(urlFile, []byte("http://"+ln.Addr().String()), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	for range stop {
		if os.Getenv("FAKE_TUNNEL_HANG_ON_STOP") == "1" {
			fmt.Println("self fake: ignoring the stop signal")
			continue
		}
		fmt.Println("self fake: graceful stop")
		return 0
	}
	return 0
}

// hearthHelper supervises the client named by helperClientEnv, prints
// "CHILD <pid>" once it is ready, and then runs until killed.
func hearthHelper() int {
	os.Unsetenv(helperEnv)
	store := newMemStore()
	store.Set(KeyName, []byte(helperKey))
	client := os.Getenv(helperClientEnv)
	sum, err := fileSHA256(client)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	s := New(Options{
		Config:  config.Tunnel{ClientPath: client, ClientSHA256: sum, TunnelID: "tunnel_helper", Profile: "hearth-local"},
		DataDir: os.Getenv(helperDataEnv),
		Secrets: store,
	})
	s.t = fastTiming()
	if err := s.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	deadline := time.Now().Add(30 * time.Second)
	for s.Status().State != StateReady {
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "helper: not ready: %+v\n", s.Status())
			return 1
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("CHILD %d\n", s.Status().PID)
	select {}
}

// startHelper runs hearthHelper over client and returns it with the pid of
// the tunnel-client it supervises.
func startHelper(t *testing.T, client string, extraEnv ...string) (*exec.Cmd, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", helperClientEnv+"="+client, helperDataEnv+"="+t.TempDir())
	cmd.Env = append(cmd.Env, extraEnv...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		buf := make([]byte, 256)
		var got []byte
		for {
			n, err := out.Read(buf)
			got = append(got, buf[:n]...)
			if i := bytes.IndexByte(got, '\n'); i >= 0 {
				line <- string(got[:i])
				return
			}
			if err != nil {
				line <- string(got)
				return
			}
		}
	}()
	select {
	case l := <-line:
		pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(l, "CHILD ")))
		if err != nil {
			t.Fatalf("helper said %q (stderr: %s)", l, stderr.String())
		}
		return cmd, pid
	case <-time.After(60 * time.Second):
		t.Fatalf("helper did not report its child (stderr: %s)", stderr.String())
	}
	return nil, 0
}
