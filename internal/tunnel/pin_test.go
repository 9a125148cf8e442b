package tunnel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	p := filepath.Join(t.TempDir(), ClientName())
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

// TestPinClientRecordsHash: pinning takes an absolute path and the
// SHA-256 the operator was shown, checks the file still has it, and
// records path and hash in config.json and the ledger, completing the
// setup. Anything else is refused, naming the field, and pins nothing.
func TestPinClientRecordsHash(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	s, _, _ := newSupervisor(t, "", testTunnelID, testKey(t))
	cfgPath := withConfigFile(t, s)
	l := openLedger(t)
	s.journal = l
	s.Check("")
	if st := s.Status(); st.State != StateNotConfigured || !strings.Contains(st.Reason, "not pinned") || !strings.Contains(st.Reason, "Setup page") {
		t.Fatalf("before the pin: %+v", st)
	}
	if _, ok := s.Pinned(); ok {
		t.Fatal("Pinned() before any pin")
	}

	beside := filepath.Join(s.exeDir, ClientName())
	if err := os.WriteFile(beside, []byte("tunnel-client v1"), 0o700); err != nil {
		t.Fatal(err)
	}
	// sha256sum of the 16 bytes "tunnel-client v1".
	const want = "ea6c734949168f18d643645d05de2875763ba2c4b8bfdb45b8fb036d10f75021"
	var ce *config.Error
	for _, tc := range []struct {
		name, path, sum, key string
	}{
		{"a relative path", ClientName(), want, "tunnel.client_path"},
		{"a missing file", filepath.Join(t.TempDir(), ClientName()), want, "tunnel.client_path"},
		{"no hash", beside, "", "tunnel.client_sha256"},
		{"a hash that is not one", beside, "abc", "tunnel.client_sha256"},
	} {
		if _, err := s.PinClient(tc.path, tc.sum); !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("pin of %s: %v, want a %s error", tc.name, err, tc.key)
		}
	}
	// The file changed after the operator saw its hash: refused, nothing
	// pinned, both hashes named.
	seen := strings.Repeat("0", 64)
	_, err := s.PinClient(beside, seen)
	var mismatch *HashMismatchError
	if !errors.Is(err, ErrHashMismatch) || !errors.As(err, &mismatch) || mismatch.Got != want || mismatch.Want != seen ||
		!strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), seen) || !strings.Contains(err.Error(), "nothing was pinned") {
		t.Errorf("pin with a hash the file no longer has: %v", err)
	}
	if _, ok := s.Pinned(); ok {
		t.Fatal("a refused pin pinned")
	}
	if entries, err := l.Tail(context.Background(), 5); err != nil || len(entries) != 0 {
		t.Fatalf("a refused pin reached the ledger: %+v, %v", entries, err)
	}

	pin, err := s.PinClient(beside, strings.ToUpper(want))
	if err != nil {
		t.Fatal(err)
	}
	if pin.Path != beside || pin.SHA256 != want {
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
	var data pinRecord
	if err := json.Unmarshal(entries[0].Data, &data); err != nil || data.Pin != pin || !strings.Contains(data.How, "operator") {
		t.Errorf("ledger pin = %+v, %v; want %+v by the operator", data, err, pin)
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
	want, _ := fileSHA256(client)
	pin, err := s.PinClient(client, want)
	if err != nil {
		t.Fatal(err)
	}
	if pin.Path != client || pin.SHA256 != want {
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
// The planted copy is made before the start, so that planting is one
// rename, and the fake runs 2 s before it crashes: time enough, on a
// loaded machine, to plant before the restart that must refuse it.
func TestClientChangedBeforeRestart(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	t.Setenv("FAKE_TUNNEL_CRASH_AFTER", "2s")
	fake := fakeClient(t)
	client := copyClient(t, fake, "")
	planted := copyClient(t, fake, "planted while running")
	s, _, logs := newSupervisor(t, client, testTunnelID, testKey(t))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "the first start", 20*time.Second, func(Status) bool { return countStarts(t, starts) >= 1 })
	if err := os.Rename(planted, client); err != nil {
		t.Fatal(err)
	}
	before := countStarts(t, starts)
	st := waitFor(t, s, "client_changed", 20*time.Second, stateIs(StateClientChanged))
	if !strings.Contains(st.Reason, client) || st.PID != 0 {
		t.Errorf("status = %+v", st)
	}
	time.Sleep(10 * s.t.backoffMax)
	if n := countStarts(t, starts); n != before || s.Running() || s.Status().State != StateClientChanged {
		t.Errorf("%d starts after the plant (%d before), running %v, %+v: want no start and no retry", n, before, s.Running(), s.Status())
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
	if b, err := os.ReadFile(onPath); err != nil || os.WriteFile(filepath.Join(s.exeDir, ClientName()), b, 0o700) != nil {
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

// TestInitPinsOnlyBesideExe: with nothing pinned, init never pins (nor
// runs) a tunnel-client found on PATH or named by tunnel.client_path; it
// pins the one beside hearth-tray, which the model cannot have planted,
// and runs that.
func TestInitPinsOnlyBesideExe(t *testing.T) {
	t.Setenv("FAKE_TUNNEL_PROFILE_DIR", t.TempDir())
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	fake := fakeClient(t)
	onPath := copyClient(t, fake, "planted on PATH")
	t.Setenv("PATH", filepath.Dir(onPath))
	s, _, _ := newSupervisor(t, "", "", testKey(t))
	cfgPath := withConfigFile(t, s)
	l := openLedger(t)
	s.journal = l
	const mcpURL = "http://127.0.0.1:3000/mcp"

	if _, err := s.Init(context.Background(), testTunnelID, mcpURL); !errors.Is(err, ErrNotPinned) {
		t.Fatalf("init with a tunnel-client only on PATH: %v", err)
	}
	cfg := s.Config()
	cfg.ClientPath = onPath
	if err := s.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Init(context.Background(), testTunnelID, mcpURL); !errors.Is(err, ErrNotPinned) {
		t.Fatalf("init with tunnel.client_path but no hash: %v", err)
	}
	if _, ok := s.Pinned(); ok {
		t.Fatal("init pinned a tunnel-client from PATH or tunnel.client_path")
	}
	if entries, _ := l.Tail(context.Background(), 5); len(entries) != 0 {
		t.Fatalf("ledger: %+v", entries)
	}

	// beside hearth-tray, but tunnel.client_path names another file: the
	// operator's choice is not overridden.
	beside := filepath.Join(s.exeDir, ClientName())
	b, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(beside, b, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Init(context.Background(), testTunnelID, mcpURL); !errors.Is(err, ErrNotPinned) {
		t.Fatalf("init with tunnel.client_path naming another file: %v", err)
	}
	cfg.ClientPath = ""
	if err := s.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	res, err := s.Init(context.Background(), testTunnelID, mcpURL)
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
	if entries, _ := l.Tail(context.Background(), 5); len(entries) != 1 || entries[0].Kind != KindClientPinned {
		t.Errorf("ledger after init: %+v", entries)
	}
	if n := countStarts(t, starts); n != 0 {
		t.Errorf("%d runs", n)
	}
}

// TestAutoPinAtStart: a configuration from before pinning (tunnel ID and
// key, no hash) gets the tunnel-client beside hearth-tray pinned at
// start, journaled and logged, so autostart keeps working; never one on
// PATH or another file tunnel.client_path names, and nothing without a
// tunnel ID and a key. Then the tunnel stays not set up, saying to pin on
// the Setup page.
func TestAutoPinAtStart(t *testing.T) {
	fake := fakeClient(t)
	onPath := copyClient(t, fake, "on PATH")
	t.Setenv("PATH", filepath.Dir(onPath))

	// Only on PATH: nothing pinned, the reason says where to pin.
	s, store, logs := newSupervisor(t, "", testTunnelID, testKey(t))
	withConfigFile(t, s)
	if _, ok, err := s.AutoPin(); ok || err != nil {
		t.Fatalf("AutoPin with a tunnel-client only on PATH: %v, %v", ok, err)
	}
	if err := s.Start(context.Background()); !errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), "pin it on the Setup page") {
		t.Errorf("Start: %v", err)
	}

	beside := filepath.Join(s.exeDir, ClientName())
	b, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(beside, b, 0o700); err != nil {
		t.Fatal(err)
	}
	// No key: not set up, nothing pinned.
	store.Delete(KeyName)
	if _, ok, err := s.AutoPin(); ok || err != nil {
		t.Fatalf("AutoPin without a key: %v, %v", ok, err)
	}
	store.Set(KeyName, []byte(testKey(t)))
	// tunnel.client_path names another file: the operator's, not pinned.
	cfg := s.Config()
	cfg.ClientPath = onPath
	if err := s.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.AutoPin(); ok || err != nil {
		t.Fatalf("AutoPin with tunnel.client_path naming another file: %v, %v", ok, err)
	}
	// tunnel.client_path names the file beside hearth-tray (or nothing):
	// that one is pinned.
	cfg.ClientPath = beside
	if err := s.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	l := openLedger(t)
	s.journal = l
	pin, ok, err := s.AutoPin()
	want, _ := fileSHA256(beside)
	if err != nil || !ok || pin.Path != beside || pin.SHA256 != want {
		t.Fatalf("AutoPin: %+v, %v, %v", pin, ok, err)
	}
	entries, err := l.Tail(context.Background(), 5)
	if err != nil || len(entries) != 1 || entries[0].Kind != KindClientPinned {
		t.Fatalf("ledger: %+v, %v", entries, err)
	}
	var rec pinRecord
	if err := json.Unmarshal(entries[0].Data, &rec); err != nil || rec.Pin != pin || !strings.Contains(rec.How, "at start") {
		t.Errorf("ledger entry: %+v, %v", rec, err)
	}
	if !strings.Contains(logs.String(), "tunnel-client pinned") || !strings.Contains(logs.String(), beside) {
		t.Errorf("the automatic pin is not logged:\n%s", logs.String())
	}
	// Pinned already: nothing more.
	if _, ok, err := s.AutoPin(); ok || err != nil {
		t.Errorf("second AutoPin: %v, %v", ok, err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "ready", 20*time.Second, stateIs(StateReady))
}

// TestCandidates: what the Setup page offers to pin: the tunnel-client
// beside hearth-tray, the one tunnel.client_path names and the one on
// PATH, each once, each with its SHA-256; one on PATH or inside an fs
// root is flagged, the one beside hearth-tray (denied to fs) is not.
func TestCandidates(t *testing.T) {
	root := t.TempDir()
	onPath := filepath.Join(root, "bin", ClientName())
	if err := os.MkdirAll(filepath.Dir(onPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(onPath, []byte("tunnel-client v1"), 0o700); err != nil {
		t.Fatal(err)
	}
	const sumV1 = "ea6c734949168f18d643645d05de2875763ba2c4b8bfdb45b8fb036d10f75021"
	t.Setenv("PATH", filepath.Dir(onPath))
	s, _, _ := newSupervisor(t, "", testTunnelID, testKey(t))
	s.roots = []string{root}
	configured := dummyClient(t)
	beside := filepath.Join(s.exeDir, ClientName())
	if err := os.WriteFile(beside, []byte("beside"), 0o700); err != nil {
		t.Fatal(err)
	}
	s.roots = append(s.roots, s.exeDir)
	cfg := s.Config()
	cfg.ClientPath = configured
	if err := s.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	got := s.Candidates()
	if len(got) != 3 {
		t.Fatalf("candidates: %+v", got)
	}
	sumBeside, _ := fileSHA256(beside)
	sumConfigured, _ := fileSHA256(configured)
	for i, want := range []Candidate{
		{Path: beside, Source: SourceBesideExe, SHA256: sumBeside},
		{Path: configured, Source: SourceConfigured, SHA256: sumConfigured},
		{Path: onPath, Source: SourcePath, SHA256: sumV1, Root: root},
	} {
		if got[i] != want {
			t.Errorf("candidate %d = %+v, want %+v", i, got[i], want)
		}
	}
	if got[0].Risky() || got[1].Risky() || !got[2].Risky() {
		t.Errorf("risky: %v %v %v", got[0].Risky(), got[1].Risky(), got[2].Risky())
	}

	// The same file found twice is listed once; a typed path is hashed
	// and flagged like the rest.
	cfg.ClientPath = onPath
	if err := s.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if got := s.Candidates(); len(got) != 2 || got[1].Source != SourceConfigured || got[1].Root != root {
		t.Errorf("candidates with tunnel.client_path on PATH: %+v", got)
	}
	c, err := s.Inspect(onPath)
	if err != nil || c.SHA256 != sumV1 || c.Source != SourceTyped || c.Root != root || !c.Risky() {
		t.Errorf("Inspect: %+v, %v", c, err)
	}
	var ce *config.Error
	if _, err := s.Inspect("tunnel-client"); !errors.As(err, &ce) || ce.Key != "tunnel.client_path" {
		t.Errorf("Inspect of a relative path: %v", err)
	}
	// Nothing of this pinned anything.
	if _, ok := s.Pinned(); ok {
		t.Error("listing candidates pinned one")
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
	s.seams.beforeExec = func() { swapped = os.Rename(planted, client) }
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
	cancelSlow := s.OnChange(func(Status) { <-block })
	defer func() {
		close(block)
		cancelSlow()
	}()

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

// TestOnChangeCancelWaits: cancel returns only once a running call of fn
// has returned, and no call of fn begins after cancel returned, however
// the changes race with it.
func TestOnChangeCancelWaits(t *testing.T) {
	s, _, _ := newSupervisor(t, dummyClient(t), testTunnelID, "")
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var cancelled atomic.Bool
	var late atomic.Int32
	cancel := s.OnChange(func(Status) {
		if cancelled.Load() {
			late.Add(1)
		}
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
	})
	s.Check("")
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the subscriber was never called")
	}
	done := make(chan struct{})
	go func() {
		cancel()
		cancelled.Store(true)
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("cancel returned while a call of fn was still running")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("cancel did not return after the call ended")
	}
	for i := range 20 {
		s.update(nil, func(st *Status) { st.Reason = "change " + strconv.Itoa(i) })
	}
	time.Sleep(100 * time.Millisecond)
	if n := late.Load(); n != 0 {
		t.Errorf("%d calls began after cancel returned", n)
	}

	// Racing changes: after each cancel, not one more call.
	for round := range 200 {
		var gone atomic.Bool
		var after atomic.Int32
		cancel := s.OnChange(func(Status) {
			if gone.Load() {
				after.Add(1)
			}
		})
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s.update(nil, func(st *Status) { st.Reason = fmt.Sprintf("round %d change %d", round, i) })
			}
		})
		time.Sleep(time.Duration(round%5) * 100 * time.Microsecond)
		cancel()
		gone.Store(true)
		time.Sleep(time.Millisecond)
		close(stop)
		wg.Wait()
		if n := after.Load(); n != 0 {
			t.Fatalf("round %d: %d calls began after cancel returned", round, n)
		}
	}
}

// TestUnreadableClientRetries: a pinned file that cannot be opened for a
// while (a backup tool or an antivirus holding it: a sharing violation on
// Windows, see supervisor_windows_test.go for the real one) is not
// client_changed: the supervisor shows the error, backs off, tries again,
// and starts it once it can be read.
func TestUnreadableClientRetries(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	client := copyClient(t, fakeClient(t), "")
	s, _, logs := newSupervisor(t, client, testTunnelID, testKey(t))
	var held atomic.Bool
	held.Store(true)
	var tries atomic.Int32
	s.seams.open = func(p string) (*os.File, error) {
		if held.Load() {
			tries.Add(1)
			return nil, &os.PathError{Op: "open", Path: p, Err: syscall.EBUSY}
		}
		return openExclusive(p)
	}
	var mu sync.Mutex
	var seen []State
	defer s.OnChange(func(st Status) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, st.State)
	})()
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("Start while the file is held: %v", err)
	}
	st := waitFor(t, s, "backoff on the unreadable file", 20*time.Second, func(st Status) bool {
		return st.State == StateBackoff && tries.Load() >= 3
	})
	if !strings.Contains(st.LastError, client) || !strings.Contains(st.LastError, syscall.EBUSY.Error()) ||
		!strings.Contains(st.Reason, "could not be read") || strings.Contains(st.Reason, client) || !s.Running() {
		t.Errorf("while held: %+v, running %v", st, s.Running())
	}
	if n := countStarts(t, starts); n != 0 {
		t.Fatalf("%d starts while the file could not be read", n)
	}
	held.Store(false)
	st = waitFor(t, s, "ready once readable", 20*time.Second, stateIs(StateReady))
	if st.Restarts != 0 {
		t.Errorf("unreadable tries counted as restarts: %+v", st)
	}
	if n := countStarts(t, starts); n != 1 {
		t.Errorf("%d starts, want 1", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(seen, StateClientChanged) || slices.Contains(seen, StateCrashLoop) {
		t.Errorf("states %v: an unreadable file is neither changed nor a crash", seen)
	}
	if !strings.Contains(readLog(s), "trying again") || !strings.Contains(logs.String(), "unreadable") {
		t.Error("the retries are not in the tunnel log and Hearth's log")
	}
}

// TestScriptClient: a tunnel-client that is a #! script runs: supervised
// (through the descriptor Hearth hashed, which a script's interpreter
// can still open) and for doctor; a script renamed over it after the hash
// is not what the supervisor runs.
func TestScriptClient(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("scripts as tunnel-client: Linux only")
	}
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	fake := fakeClient(t)
	client := filepath.Join(t.TempDir(), ClientName())
	if err := os.WriteFile(client, []byte("#!/bin/sh\nexec '"+fake+"' \"$@\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "planted-ran")
	planted := filepath.Join(t.TempDir(), "planted")
	if err := os.WriteFile(planted, []byte("#!/bin/sh\necho planted > "+marker+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	s, _, _ := newSupervisor(t, client, testTunnelID, testKey(t))
	res, err := s.Doctor(context.Background())
	if err != nil || !res.OK() || !strings.Contains(res.Stdout, "doctor: profile hearth-local") {
		t.Fatalf("doctor of a script client: %+v, %v", res, err)
	}
	var swapped error
	s.seams.beforeExec = func() { swapped = os.Rename(planted, client) }
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "ready", 20*time.Second, stateIs(StateReady))
	if swapped != nil {
		t.Fatalf("swap: %v", swapped)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the script swapped in after the hash ran")
	}
	if n := countStarts(t, starts); n != 1 {
		t.Errorf("%d starts of the pinned script, want 1", n)
	}
}
