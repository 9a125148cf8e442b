package tunnel

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const testTunnelID = "tunnel_0123456789abcdef0123456789abcdef"

// testKey returns a fresh random runtime key, so a match in a scan can
// only come from this test.
func testKey(t *testing.T) string {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "sk-test-" + hex.EncodeToString(b[:])
}

func countStarts(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "start ")
}

func TestReadyAndStop(t *testing.T) {
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	var mu sync.Mutex
	var seen []State
	s.OnChange(func(st Status) {
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 || seen[len(seen)-1] != st.State {
			seen = append(seen, st.State)
		}
	})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "ready", 20*time.Second, stateIs(StateReady))
	if st.PID == 0 || st.Restarts != 0 || st.Reason == "" {
		t.Errorf("ready status = %+v", st)
	}
	if !s.Running() {
		t.Error("Running() = false while ready")
	}
	if err := s.Start(context.Background()); err != nil {
		t.Errorf("second Start: %v", err)
	}
	started := time.Now()
	s.Stop()
	if d := time.Since(started); d > s.t.stopGrace {
		t.Errorf("graceful Stop took %s, longer than the grace period", d)
	}
	if st := s.Status(); st.State != StateStopped || st.PID != 0 {
		t.Errorf("after Stop: %+v", st)
	}
	waitDead(t, st.PID, "tunnel-client")
	log := readLog(s)
	for _, want := range []string{"fake tunnel: run profile=hearth-local", "key_set=true", "fake tunnel: graceful stop", "hearth: started"} {
		if !strings.Contains(log, want) {
			t.Errorf("tunnel log lacks %q:\n%s", want, log)
		}
	}
	if _, err := os.Stat(s.healthURLFile()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("health URL file left behind: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := append([]State(nil), seen...)
		mu.Unlock()
		if len(got) > 0 && got[len(got)-1] == StateStopped {
			if got[0] != StateStarting || !containsState(got, StateReady) {
				t.Errorf("callback saw %v, want starting … ready … stopped", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("callback saw %v, never stopped", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func containsState(ss []State, want State) bool {
	for _, s := range ss {
		if s == want {
			return true
		}
	}
	return false
}

// TestKeyOnlyInChildEnvironment: the key reaches tunnel-client's
// environment and nothing else: not its argv, not Hearth's environment,
// not the tunnel log, not any file under the data directory, not Hearth's
// own log, not the status.
func TestKeyOnlyInChildEnvironment(t *testing.T) {
	key := testKey(t)
	s, _, logs := newSupervisor(t, fakeClient(t), testTunnelID, key)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "ready", 20*time.Second, stateIs(StateReady))
	if os.Getenv(EnvKey) != "" {
		t.Errorf("%s is set in Hearth's own environment", EnvKey)
	}
	if runtime.GOOS == "linux" {
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(cmdline, []byte(key)) {
			t.Error("the key is in tunnel-client's argv")
		}
		if !bytes.Contains(cmdline, []byte("--health.url-file")) {
			t.Errorf("argv %q lacks --health.url-file", cmdline)
		}
		environ, err := os.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/environ")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(environ, []byte(EnvKey+"="+key+"\x00")) {
			t.Errorf("tunnel-client's environment lacks %s", EnvKey)
		}
	}
	s.Stop()
	log := readLog(s)
	if !strings.Contains(log, "key_set=true") {
		t.Errorf("the fake did not see the key in its environment:\n%s", log)
	}
	scanForKey(t, s.dataDir, key)
	if strings.Contains(logs.String(), key) {
		t.Error("Hearth's own log holds the key")
	}
	b, _ := json.Marshal(s.Status())
	if bytes.Contains(b, []byte(key)) {
		t.Error("the status holds the key")
	}
}

// scanForKey fails if any file under dir contains key.
func scanForKey(t *testing.T, dir, key string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds the key", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("the data directory holds no file at all; the scan proves nothing")
	}
}

func TestCrashBackoffRestart(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	t.Setenv("FAKE_TUNNEL_CRASH_AFTER", "150ms")
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "backoff", 20*time.Second, stateIs(StateBackoff))
	if !strings.Contains(st.Reason, "exited with status 3") || !strings.Contains(st.Reason, "restarting in") {
		t.Errorf("backoff reason = %q", st.Reason)
	}
	if !strings.Contains(st.LastError, "control plane rejected the connection") {
		t.Errorf("last error = %q, want the fake's error line", st.LastError)
	}
	waitFor(t, s, "two restarts and three starts", 20*time.Second, func(st Status) bool {
		return st.Restarts >= 2 && countStarts(t, starts) >= 3
	})
	log := readLog(s)
	if !strings.Contains(log, "restarting in 20ms") || !strings.Contains(log, "restarting in 40ms") {
		t.Errorf("backoff does not double from 20ms:\n%s", log)
	}
}

func TestBackoffResetsAfterHealthyRun(t *testing.T) {
	t.Setenv("FAKE_TUNNEL_CRASH_AFTER", "300ms")
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	s.t.healthyAfter = 100 * time.Millisecond // every run counts as healthy
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "three restarts", 20*time.Second, func(st Status) bool { return st.Restarts >= 3 })
	log := readLog(s)
	if strings.Contains(log, "restarting in 40ms") {
		t.Errorf("backoff grew although every run was healthy:\n%s", log)
	}
}

func TestCrashLoopStopsRestarting(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	t.Setenv("FAKE_TUNNEL_CRASH_AFTER", "50ms")
	s, _, logs := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	s.t.loopFailures = 3
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "crash_loop", 20*time.Second, stateIs(StateCrashLoop))
	if !strings.Contains(st.Reason, "exited 3 times") || st.PID != 0 {
		t.Errorf("crash loop status = %+v", st)
	}
	if s.Running() {
		t.Error("still supervising after a crash loop")
	}
	time.Sleep(10 * s.t.backoffMax)
	if n := countStarts(t, starts); n != 3 {
		t.Errorf("%d starts, want exactly 3 (no restart after the crash loop)", n)
	}
	if !strings.Contains(readLog(s), "crash loop") || !strings.Contains(logs.String(), "crash loop") {
		t.Error("the crash loop is not said in the tunnel log and Hearth's log")
	}
	// An explicit Start begins afresh.
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "a new start", 20*time.Second, func(Status) bool { return countStarts(t, starts) >= 4 })
}

// TestStopKillsHangingTree: a child that ignores the graceful signal is
// killed after the grace period, together with the process it started.
func TestStopKillsHangingTree(t *testing.T) {
	childPID := filepath.Join(t.TempDir(), "child.pid")
	t.Setenv("FAKE_TUNNEL_HANG_ON_STOP", "1")
	t.Setenv("FAKE_TUNNEL_CHILD_PID", childPID)
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	s.t.stopGrace = 500 * time.Millisecond
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "ready", 20*time.Second, stateIs(StateReady))
	b, err := os.ReadFile(childPID)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if !alive(grandchild) {
		t.Fatal("the grandchild is not running before Stop")
	}
	started := time.Now()
	s.Stop()
	if d := time.Since(started); d < s.t.stopGrace {
		t.Errorf("Stop took %s: the child was not given the grace period", d)
	}
	waitDead(t, st.PID, "tunnel-client")
	waitDead(t, grandchild, "tunnel-client's child")
	if !strings.Contains(readLog(s), "ignoring the stop signal") {
		t.Errorf("the graceful signal did not reach the child:\n%s", readLog(s))
	}
}

// TestDiesWithHearth: when Hearth is killed outright, tunnel-client does
// not outlive it (here through stdin's EOF, which the fake is told to
// heed; on Windows the Job Object kills it regardless).
func TestDiesWithHearth(t *testing.T) {
	client := fakeClient(t)
	helper, pid := startHelper(t, client, "FAKE_TUNNEL_EXIT_ON_EOF=1")
	if !alive(pid) {
		t.Fatal("tunnel-client is not running")
	}
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	waitDead(t, pid, "tunnel-client of a killed Hearth")
}

func TestUnhealthy(t *testing.T) {
	t.Setenv("FAKE_TUNNEL_UNHEALTHY", "1")
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "unhealthy", 20*time.Second, stateIs(StateUnhealthy))
	// The reason reaches host_info (the model): tunnel-client's own
	// /readyz text stays out of it, only the status code is told.
	if !strings.Contains(st.Reason, "503") || strings.Contains(st.Reason, "control plane unreachable") || st.PID == 0 {
		t.Errorf("unhealthy status = %+v", st)
	}
}

func TestRedaction(t *testing.T) {
	key := testKey(t)
	t.Setenv("FAKE_TUNNEL_LEAK_KEY", "1")
	t.Setenv("FAKE_TUNNEL_CRASH_AFTER", "100ms")
	s, _, logs := newSupervisor(t, fakeClient(t), testTunnelID, key)
	s.t.loopFailures = 2
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "crash_loop", 20*time.Second, stateIs(StateCrashLoop))
	if strings.Contains(st.LastError, key) || strings.Contains(st.Reason, key) {
		t.Errorf("the status holds the key: %+v", st)
	}
	log := readLog(s)
	if !strings.Contains(log, "refused key "+Redacted) {
		t.Errorf("the leaked key is not redacted in the log:\n%s", log)
	}
	scanForKey(t, s.dataDir, key)
	if strings.Contains(logs.String(), key) {
		t.Error("Hearth's own log holds the key")
	}
}

// dummyClient writes a file named like tunnel-client (that is all the
// configuration checks look at) and returns its path.
func dummyClient(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ClientName())
	if err := os.WriteFile(p, []byte("not run"), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNotConfigured(t *testing.T) {
	client := dummyClient(t)
	t.Setenv("PATH", t.TempDir())
	cases := []struct {
		name, client, tunnelID, key string
		want                        []string
	}{
		{"no key", client, testTunnelID, "", []string{"no tunnel runtime key"}},
		{"no tunnel id", client, "", testKey(t), []string{"no tunnel ID"}},
		{"nothing pinned", "", testTunnelID, testKey(t), []string{"tunnel-client is not pinned yet"}},
		{"nothing", "", "", "", []string{"no tunnel ID", "no tunnel runtime key", "not pinned"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _, _ := newSupervisor(t, tc.client, tc.tunnelID, tc.key)
			err := s.Start(context.Background())
			if !errors.Is(err, ErrNotConfigured) {
				t.Fatalf("Start: %v, want ErrNotConfigured", err)
			}
			st := s.Status()
			if st.State != StateNotConfigured || s.Running() {
				t.Errorf("status %+v, running %v", st, s.Running())
			}
			for _, w := range tc.want {
				if !strings.Contains(st.Reason, w) || !strings.Contains(err.Error(), w) {
					t.Errorf("reason %q / error %q does not say %q", st.Reason, err, w)
				}
			}
			if tc.client != "" && strings.Contains(st.Reason, tc.client) {
				t.Errorf("reason %q names a path", st.Reason)
			}
		})
	}
}

// TestRestartAppliesNewKey: SetKey while running restarts tunnel-client
// with the new key, and that is not counted as a crash.
func TestRestartAppliesNewKey(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	s, store, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := waitFor(t, s, "ready", 20*time.Second, stateIs(StateReady))
	newKey := testKey(t)
	if err := s.SetKey(newKey); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "ready again", 20*time.Second, func(st Status) bool {
		return st.State == StateReady && st.PID != first.PID
	})
	if st.Restarts != 0 {
		t.Errorf("a requested restart counted as a crash: %+v", st)
	}
	if got, _ := store.Get(KeyName); string(got) != newKey {
		t.Error("the new key was not stored")
	}
	if n := countStarts(t, starts); n != 2 {
		t.Errorf("%d starts, want 2", n)
	}
	waitDead(t, first.PID, "the first tunnel-client")
}

func TestStopOnContextEnd(t *testing.T) {
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "ready", 20*time.Second, stateIs(StateReady))
	cancel()
	waitFor(t, s, "stopped", 20*time.Second, stateIs(StateStopped))
	waitDead(t, st.PID, "tunnel-client")
}
