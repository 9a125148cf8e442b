package tunnel

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestKeyRefusedIsItsOwnState runs the FAKE tunnel-client with its fake
// control plane refusing the key: /readyz answers 200 all along (as the
// real client's does), but the tunnel must never be ready; it is
// key_refused, in words that name the key.
func TestKeyRefusedIsItsOwnState(t *testing.T) {
	t.Setenv("FAKE_TUNNEL_REFUSE_KEY", "1")
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	seenReady := make(chan struct{}, 1)
	cancel := s.OnChange(func(st Status) {
		if st.State == StateReady {
			select {
			case seenReady <- struct{}{}:
			default:
			}
		}
	})
	defer cancel()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "key refused", 20*time.Second, stateIs(StateKeyRefused))
	if !strings.Contains(st.Reason, "refused the tunnel key") || st.PID == 0 {
		t.Errorf("status = %+v, want a reason that names the refused key and the running child's pid", st)
	}
	// Many more health polls: it stays refused, never ready.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if got := s.Status().State; got != StateKeyRefused {
			t.Fatalf("state moved to %s with the key refused", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case <-seenReady:
		t.Fatal("the tunnel was reported ready while the control plane refused the key")
	default:
	}
	// A new key restarts the child; the fake still refuses, so the state
	// comes back to key_refused rather than ready.
	if err := s.SetKey(testKey(t)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "key refused again", 20*time.Second, stateIs(StateKeyRefused))
}

// TestKeyRefusedExitIsNoRestartLoop: a client that exits after the control
// plane refused its key is not restarted (the same key would fail again).
func TestKeyRefusedExitIsNoRestartLoop(t *testing.T) {
	t.Setenv("FAKE_TUNNEL_REFUSE_KEY", "1")
	t.Setenv("FAKE_TUNNEL_CRASH_AFTER", "300ms")
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "supervision ended", 20*time.Second, func(st Status) bool { return !s.Running() })
	st := s.Status()
	if st.State != StateKeyRefused || st.Restarts != 0 || st.PID != 0 {
		t.Fatalf("after a refused key the client exited: %+v, want key_refused without restarts", st)
	}
	// Saving a key lifts it (the new key is not tried yet).
	if err := s.SetKey(testKey(t)); err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st.State != StateStopped {
		t.Fatalf("after a new key: %+v, want stopped", st)
	}
}

// TestPollFailingIsNotReady: /readyz fine, polls failing without a 401:
// the connection to OpenAI is failing, not ready.
func TestPollFailingIsNotReady(t *testing.T) {
	t.Setenv("FAKE_TUNNEL_POLL_FAIL", "1")
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "unhealthy", 20*time.Second, stateIs(StateUnhealthy))
	if st.Reason != ReasonPollFailing {
		t.Errorf("reason = %q, want %q", st.Reason, ReasonPollFailing)
	}
}

// TestReadyNeedsRecentPoll: with polls succeeding the tunnel is ready;
// a last successful poll older than pollFresh is not ready.
func TestReadyNeedsRecentPoll(t *testing.T) {
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "ready", 20*time.Second, stateIs(StateReady))
	if st.Reason != ReasonReady {
		t.Errorf("reason = %q", st.Reason)
	}
	s.Stop()

	s2, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, testKey(t))
	s2.t.pollFresh = time.Nanosecond // every poll is already too old
	if err := s2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s2, "unhealthy", 20*time.Second, stateIs(StateUnhealthy))
	if s2.Status().State == StateReady {
		t.Fatal("ready without a recent poll")
	}
}

func TestParsePollMetric(t *testing.T) {
	for _, c := range []struct {
		body string
		want int64
	}{
		{"# HELP x\n" + pollMetric + " 1700000000.5\n", 1700000000},
		{pollMetric + `{tunnel="t"} 1700000001` + "\n", 1700000001},
		// As tunnel-client v0.0.14 writes it.
		{pollMetric + `{otel_scope_name="controlplane"} 1.789486034e+09` + "\n", 1789486034},
		{"tunnel_client_" + pollMetric + " 1700000002\n", 1700000002},
		{"x" + pollMetric + " 1700000002\n", 0},
		{pollMetric + " 0\n", 0},
		{pollMetric + "_other 1700000000\n", 0},
		{"other 1700000000\n", 0},
		{pollMetric + " NaN\n", 0},
		{"", 0},
	} {
		got := parsePollMetric(c.body)
		if (c.want == 0) != got.IsZero() || (c.want != 0 && got.Unix() != c.want) {
			t.Errorf("parsePollMetric(%q) = %v, want %d", c.body, got, c.want)
		}
	}
}

func TestKeyRefusedLine(t *testing.T) {
	for line, want := range map[string]bool{
		`level=ERROR msg="commands poll failed" status=401 error="401 Unauthorized"`: true,
		`poll: 403 Forbidden`:                     true,
		`level=INFO msg="connected"`:              false,
		`level=WARN msg="poll failed" status=503`: false,
	} {
		if got := keyRefusedLine(line); got != want {
			t.Errorf("keyRefusedLine(%q) = %v", line, got)
		}
	}
}

// TestFirstChatGPTCall: the first call is remembered with its time, in
// the data directory, and later calls do not move it.
func TestFirstChatGPTCall(t *testing.T) {
	s, _, _ := newSupervisor(t, "", "", "")
	if !s.FirstChatGPTCall().IsZero() {
		t.Fatal("a fresh data directory has a first call")
	}
	first := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s.NoteChatGPTCall(first)
	s.NoteChatGPTCall(first.Add(time.Hour))
	if got := s.FirstChatGPTCall(); !got.Equal(first) {
		t.Fatalf("first call = %v, want %v", got, first)
	}
	again := New(Options{DataDir: s.dataDir})
	if got := again.FirstChatGPTCall(); !got.Equal(first) {
		t.Fatalf("after a restart the first call = %v, want %v", got, first)
	}
}

// TestNewKeyEndsRefusalAtOnce: with tunnel-client running on a key the
// FAKE control plane refuses, saving another key makes the status
// "starting" at once, and from then on it never says the key is refused
// (the old child's last 401s are about the old key) until the new key's
// answer: ready.
func TestNewKeyEndsRefusalAtOnce(t *testing.T) {
	wrong, right := testKey(t), testKey(t)
	refused := filepath.Join(t.TempDir(), "refused-keys")
	if err := os.WriteFile(refused, []byte(wrong+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FAKE_TUNNEL_REFUSE_KEYS", refused)
	// The old child lingers (its stop grace) and goes on logging 401s.
	t.Setenv("FAKE_TUNNEL_HANG_ON_STOP", "1")
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, wrong)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "the wrong key refused", 30*time.Second, stateIs(StateKeyRefused))

	var mu sync.Mutex
	var seen []State
	var lastErrors []string
	cancel := s.OnChange(func(st Status) {
		mu.Lock()
		seen = append(seen, st.State)
		if st.LastError != "" {
			lastErrors = append(lastErrors, st.LastError)
		}
		mu.Unlock()
	})
	defer cancel()
	if err := s.SetKey(right); err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st.State != StateStarting || st.LastError != "" {
		t.Fatalf("right after a new key is saved: %+v, want starting with no error of the old key", st)
	}
	waitFor(t, s, "ready with the right key", 30*time.Second, stateIs(StateReady))
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(seen, StateKeyRefused) {
		t.Errorf("after the new key was saved the status said the key was refused: %v", seen)
	}
	if len(lastErrors) > 0 {
		t.Errorf("after the new key was saved the old key's errors were shown: %q", lastErrors)
	}
}
