package tunnel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
)

// copyClient copies the program src to a fresh folder as tunnel-client,
// with extra appended (trailing bytes change the hash, not what it does),
// and returns its path.
func copyClient(t *testing.T, src string, extra string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), clientName())
	if err := os.WriteFile(p, append(b, extra...), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// plant replaces the file at path with a copy of src plus extra, by
// renaming over it (as a model with write access to the folder could;
// a running program's file cannot be written in place).
func plant(t *testing.T, src, path, extra string) {
	t.Helper()
	planted := copyClient(t, src, extra)
	if err := os.Rename(planted, path); err != nil {
		t.Fatal(err)
	}
}

func withConfigFile(t *testing.T, s *Supervisor) string {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	c := config.Default()
	c.Tunnel = s.Config()
	if err := config.Write(cfgPath, c); err != nil {
		t.Fatal(err)
	}
	s.configPath = cfgPath
	return cfgPath
}

// TestPinClientRecordsHash: pinning resolves the program once to an
// absolute path, records its SHA-256 in config.json and the ledger, and
// completes the setup.
func TestPinClientRecordsHash(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	s, _, _ := newSupervisor(t, "", testTunnelID, testKey(t))
	cfgPath := withConfigFile(t, s)
	l := openLedger(t)
	s.journal = l
	s.Check("")
	if st := s.Status(); st.State != StateNotConfigured || !strings.Contains(st.Reason, "not pinned") {
		t.Fatalf("before the pin: %+v", st)
	}
	if _, ok := s.Pinned(); ok {
		t.Fatal("Pinned() before any pin")
	}

	var ce *config.Error
	if _, err := s.PinClient(clientName()); !errors.As(err, &ce) || ce.Key != "tunnel.client_path" {
		t.Errorf("pin of a relative path: %v", err)
	}
	if _, err := s.PinClient(filepath.Join(t.TempDir(), clientName())); !errors.As(err, &ce) || ce.Key != "tunnel.client_path" {
		t.Errorf("pin of a missing file: %v", err)
	}
	if _, err := s.PinClient(""); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("pin with nothing to find: %v", err)
	}

	beside := filepath.Join(s.exeDir, clientName())
	if err := os.WriteFile(beside, []byte("tunnel-client v1"), 0o700); err != nil {
		t.Fatal(err)
	}
	// sha256sum of the 16 bytes "tunnel-client v1".
	const want = "ea6c734949168f18d643645d05de2875763ba2c4b8bfdb45b8fb036d10f75021"
	pin, err := s.PinClient("")
	if err != nil {
		t.Fatal(err)
	}
	if pin.Path != beside || pin.SHA256 != want || len(pin.SHA256) != 64 {
		t.Errorf("pin = %+v, want %s with sha256 %s", pin, beside, want)
	}
	if got, ok := s.Pinned(); !ok || got != pin {
		t.Errorf("Pinned() = %+v, %v", got, ok)
	}
	saved, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Tunnel.ClientPath != beside || saved.Tunnel.ClientSHA256 != want {
		t.Errorf("config.json tunnel after the pin: %+v", saved.Tunnel)
	}
	if err := s.VerifyClient(); err != nil {
		t.Errorf("VerifyClient right after the pin: %v", err)
	}
	if st := s.Status(); st.State != StateStopped {
		t.Errorf("after the pin: %+v, want stopped (set up, not started)", st)
	}
	entries, err := l.Tail(context.Background(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Kind != KindClientPinned {
		t.Fatalf("ledger: %+v", entries)
	}
	var data Pin
	if err := json.Unmarshal(entries[0].Data, &data); err != nil || data != pin {
		t.Errorf("ledger pin = %+v, %v; want %+v", data, err, pin)
	}

	// An explicit absolute path is pinned as given.
	other := dummyClient(t)
	pin, err = s.PinClient(other)
	if err != nil || pin.Path != other {
		t.Errorf("pin of %s: %+v, %v", other, pin, err)
	}
}

// TestPlantedClientRefused: a file with another hash at the pinned path
// is never started (the fake would write a start line), neither by Start
// nor by doctor or init; the status says client_changed, naming the file
// and the way out; a new pin lets it run.
func TestPlantedClientRefused(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	t.Setenv("FAKE_TUNNEL_PROFILE_DIR", t.TempDir())
	fake := fakeClient(t)
	client := copyClient(t, fake, "")
	s, _, _ := newSupervisor(t, client, testTunnelID, testKey(t))
	withConfigFile(t, s)
	good, _ := s.Pinned()

	plant(t, fake, client, "planted")
	err := s.Start(context.Background())
	var changed *ClientChangedError
	if !errors.Is(err, ErrClientChanged) || !errors.As(err, &changed) {
		t.Fatalf("Start of a planted client: %v", err)
	}
	if changed.Path != client || changed.Want != good.SHA256 || changed.Got == "" || changed.Got == good.SHA256 {
		t.Errorf("error = %+v", changed)
	}
	st := s.Status()
	if st.State != StateClientChanged || s.Running() {
		t.Errorf("status %+v, running %v", st, s.Running())
	}
	for _, want := range []string{client, "pinned", "Setup page"} {
		if !strings.Contains(st.Reason, want) {
			t.Errorf("reason %q does not say %q", st.Reason, want)
		}
	}
	if _, err := s.Doctor(context.Background()); !errors.Is(err, ErrClientChanged) {
		t.Errorf("doctor ran a planted client: %v", err)
	}
	if _, err := s.Init(context.Background(), testTunnelID, "http://127.0.0.1:3000/mcp"); !errors.Is(err, ErrClientChanged) {
		t.Errorf("init ran a planted client: %v", err)
	}
	time.Sleep(10 * s.t.backoffMax)
	if n := countStarts(t, starts); n != 0 {
		t.Fatalf("the planted client was started %d times", n)
	}
	if p, _ := s.Pinned(); p != good {
		t.Errorf("the pin moved by itself: %+v", p)
	}

	// The operator checks the new file and pins it again.
	pin, err := s.PinClient("")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := fileSHA256(client); pin.Path != client || pin.SHA256 != want {
		t.Errorf("re-pin = %+v, want %s", pin, want)
	}
	if st := s.Status(); st.State != StateStopped {
		t.Errorf("after the re-pin: %+v", st)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "ready", 20*time.Second, stateIs(StateReady))
	if n := countStarts(t, starts); n != 1 {
		t.Errorf("%d starts after the re-pin, want 1", n)
	}
}

// TestClientChangedBeforeRestart: the pinned file is hashed before every
// restart too; a change found then ends the supervision without retrying.
func TestClientChangedBeforeRestart(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	t.Setenv("FAKE_TUNNEL_CRASH_AFTER", "300ms")
	fake := fakeClient(t)
	client := copyClient(t, fake, "")
	s, _, logs := newSupervisor(t, client, testTunnelID, testKey(t))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "the first start", 20*time.Second, func(Status) bool { return countStarts(t, starts) == 1 })
	plant(t, fake, client, "planted while running")
	st := waitFor(t, s, "client_changed", 20*time.Second, stateIs(StateClientChanged))
	if !strings.Contains(st.Reason, client) || st.PID != 0 {
		t.Errorf("status = %+v", st)
	}
	time.Sleep(10 * s.t.backoffMax)
	if n := countStarts(t, starts); n != 1 || s.Running() || s.Status().State != StateClientChanged {
		t.Errorf("%d starts, running %v, %+v: want 1 start and no retry", n, s.Running(), s.Status())
	}
	if !strings.Contains(readLog(s), "not starting tunnel-client: the pinned tunnel-client") ||
		!strings.Contains(logs.String(), "not starting tunnel-client") {
		t.Error("the refusal is not in the tunnel log and Hearth's log")
	}
}

// TestUnpinnedNeverSearchesPath: with nothing pinned, a tunnel-client on
// PATH or beside hearth-tray is never run: not by Start, not by doctor.
func TestUnpinnedNeverSearchesPath(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	onPath := copyClient(t, fakeClient(t), "")
	t.Setenv("PATH", filepath.Dir(onPath))
	s, _, _ := newSupervisor(t, "", testTunnelID, testKey(t))
	if b, err := os.ReadFile(onPath); err != nil || os.WriteFile(filepath.Join(s.exeDir, clientName()), b, 0o700) != nil {
		t.Fatal("copy beside hearth-tray", err)
	}
	err := s.Start(context.Background())
	if !errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), "not pinned") {
		t.Fatalf("Start with nothing pinned: %v", err)
	}
	if _, err := s.Doctor(context.Background()); !errors.Is(err, ErrNotPinned) {
		t.Errorf("doctor with nothing pinned: %v", err)
	}
	time.Sleep(10 * s.t.backoffMax)
	if n := countStarts(t, starts); n != 0 || s.Running() {
		t.Errorf("%d starts, running %v", n, s.Running())
	}
	if st := s.Status(); st.State != StateNotConfigured {
		t.Errorf("status = %+v", st)
	}
	// Naming a client without its hash is not a pin either.
	cfg := s.Config()
	cfg.ClientPath = onPath
	if err := s.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("Start with tunnel.client_path but no hash: %v", err)
	}
}

// TestInitPins: init, the operator's setup step, pins the tunnel-client
// it finds when none is pinned, and runs that.
func TestInitPins(t *testing.T) {
	t.Setenv("FAKE_TUNNEL_PROFILE_DIR", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	s, _, _ := newSupervisor(t, "", "", testKey(t))
	cfgPath := withConfigFile(t, s)
	beside := filepath.Join(s.exeDir, clientName())
	b, err := os.ReadFile(fakeClient(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(beside, b, 0o700); err != nil {
		t.Fatal(err)
	}
	res, err := s.Init(context.Background(), testTunnelID, "http://127.0.0.1:3000/mcp")
	if err != nil || !res.OK() {
		t.Fatalf("init: %+v, %v", res, err)
	}
	want, _ := fileSHA256(beside)
	saved, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Tunnel.ClientPath != beside || saved.Tunnel.ClientSHA256 != want || saved.Tunnel.TunnelID != testTunnelID {
		t.Errorf("config.json tunnel after init: %+v", saved.Tunnel)
	}
}

// TestSwapAfterHashRunsPinned: a file renamed over the pinned path between
// the hash and the start cannot be what runs: on Linux the child is the
// hashed file itself, on Windows the rename is refused while Hearth holds
// the file.
func TestSwapAfterHashRunsPinned(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the swap window is closed on Linux through /proc/self/fd (Windows: supervisor_windows_test.go)")
	}
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	marker := filepath.Join(t.TempDir(), "planted-ran")
	client := copyClient(t, fakeClient(t), "")
	s, _, _ := newSupervisor(t, client, testTunnelID, testKey(t))
	planted := filepath.Join(t.TempDir(), "planted")
	if err := os.WriteFile(planted, []byte("#!/bin/sh\necho planted > "+marker+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	var swapped error
	s.testHookBeforeExec = func() { swapped = os.Rename(planted, client) }
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "ready", 20*time.Second, stateIs(StateReady))
	if swapped != nil {
		t.Fatalf("swap: %v", swapped)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the file swapped in after the hash ran")
	}
	if n := countStarts(t, starts); n != 1 {
		t.Errorf("%d starts of the pinned client, want 1", n)
	}
}

// TestOnChangeSubscribers: every subscriber hears every change; a
// cancelled one hears no more.
func TestOnChangeSubscribers(t *testing.T) {
	s, _, _ := newSupervisor(t, dummyClient(t), testTunnelID, "")
	type rec struct {
		mu   sync.Mutex
		seen []State
	}
	add := func(r *rec) func(Status) {
		return func(st Status) {
			r.mu.Lock()
			defer r.mu.Unlock()
			if len(r.seen) == 0 || r.seen[len(r.seen)-1] != st.State {
				r.seen = append(r.seen, st.State)
			}
		}
	}
	get := func(r *rec) []State {
		r.mu.Lock()
		defer r.mu.Unlock()
		return slices.Clone(r.seen)
	}
	waitSeen := func(r *rec, want ...State) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !slices.Equal(get(r), want) {
			if time.Now().After(deadline) {
				t.Fatalf("subscriber saw %v, want %v", get(r), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	var a, b rec
	cancelA := s.OnChange(add(&a))
	cancelB := s.OnChange(add(&b))
	// A subscriber whose callback blocks delays no other one.
	block := make(chan struct{})
	defer close(block)
	cancelSlow := s.OnChange(func(Status) { <-block })
	defer cancelSlow()

	s.Check("")
	waitSeen(&a, StateNotConfigured)
	waitSeen(&b, StateNotConfigured)
	if err := s.SetKey(testKey(t)); err != nil {
		t.Fatal(err)
	}
	waitSeen(&a, StateNotConfigured, StateStopped)
	waitSeen(&b, StateNotConfigured, StateStopped)

	cancelA()
	cancelA() // twice is harmless
	if err := s.ClearKey(); err != nil {
		t.Fatal(err)
	}
	waitSeen(&b, StateNotConfigured, StateStopped, StateNotConfigured)
	time.Sleep(50 * time.Millisecond)
	if got := get(&a); !slices.Equal(got, []State{StateNotConfigured, StateStopped}) {
		t.Errorf("a cancelled subscriber saw %v", got)
	}
	cancelB()
}
