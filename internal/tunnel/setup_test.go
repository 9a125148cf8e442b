package tunnel

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/ledger"
	"github.com/hearth-dev/hearth/internal/store"
)

// openLedger returns a real ledger over a fresh database.
func openLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	skey, _, err := note.GenerateKey(rand.Reader, "hearth/tunnel-test")
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(db, skey)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestSetKeyAndClearKey(t *testing.T) {
	s, store, logs := newSupervisor(t, dummyClient(t), testTunnelID, "")
	l := openLedger(t)
	s.journal = l
	s.Check("")
	if st := s.Status(); st.State != StateNotConfigured || !strings.Contains(st.Reason, "no tunnel runtime key") {
		t.Fatalf("before SetKey: %+v", st)
	}
	if s.KeyHint() != "" {
		t.Errorf("KeyHint without a key = %q", s.KeyHint())
	}

	for _, bad := range []string{"", "sk-12", "sk-has a space-0123456789", "sk-\x00-0123456789abc", "sk-é-0123456789abcdef"} {
		err := s.SetKey(bad)
		if err == nil {
			t.Errorf("SetKey accepted %q", bad)
			continue
		}
		if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("the error quotes the key: %v", err)
		}
	}

	key := testKey(t)
	if err := s.SetKey("  " + key + "\n"); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.Get(KeyName); string(got) != key {
		t.Errorf("stored %q, want the trimmed key", got)
	}
	if hint := s.KeyHint(); hint != "…"+key[len(key)-4:] {
		t.Errorf("KeyHint = %q", hint)
	}
	if st := s.Status(); st.State != StateStopped {
		t.Errorf("after SetKey: %+v, want stopped (configured, not started)", st)
	}
	if err := s.ClearKey(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := store.Present(KeyName); ok || s.KeyHint() != "" {
		t.Error("the key survived ClearKey")
	}
	if st := s.Status(); st.State != StateNotConfigured {
		t.Errorf("after ClearKey: %+v", st)
	}
	if err := s.ClearKey(); err != nil {
		t.Errorf("clearing an absent key: %v", err)
	}

	entries, err := l.Tail(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].Kind != "tunnel_key_set" || entries[1].Kind != "tunnel_key_cleared" {
		t.Fatalf("ledger entries: %+v", entries)
	}
	var data map[string]any
	if err := json.Unmarshal(entries[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data["last4"] != key[len(key)-4:] || len(data) != 1 {
		t.Errorf("tunnel_key_set data = %v, want only the last four characters", data)
	}
	for _, e := range entries {
		if strings.Contains(string(e.Raw), key[:len(key)-4]) {
			t.Errorf("ledger entry %s holds more of the key than its last four characters", e.Kind)
		}
	}
	if strings.Contains(logs.String(), key) {
		t.Error("Hearth's log holds the key")
	}
}

func TestInitAndDoctor(t *testing.T) {
	key := testKey(t)
	profiles := t.TempDir()
	t.Setenv("FAKE_TUNNEL_PROFILE_DIR", profiles)
	s, store, _ := newSupervisor(t, fakeClient(t), "", key)
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	c := config.Default()
	c.Tunnel = s.Config()
	if err := config.Write(cfgPath, c); err != nil {
		t.Fatal(err)
	}
	s.configPath = cfgPath

	if _, err := s.Init(context.Background(), "not-a-tunnel", "http://127.0.0.1:3000/mcp"); err == nil || !strings.Contains(err.Error(), "tunnel.tunnel_id") {
		t.Errorf("Init with a bad tunnel ID: %v", err)
	}
	if _, err := s.Init(context.Background(), testTunnelID, "file:///etc/passwd"); err == nil {
		t.Error("Init accepted a non-http MCP URL")
	}

	res, err := s.Init(context.Background(), testTunnelID, "http://127.0.0.1:3000/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || !strings.Contains(res.Stdout, "Created profile hearth-local (key_set=true)") {
		t.Fatalf("init: %+v", res)
	}
	wantArgs := "init --sample sample_mcp_remote_no_auth --profile hearth-local --tunnel-id " + testTunnelID + " --mcp-server-url http://127.0.0.1:3000/mcp"
	if got := strings.Join(res.Args, " "); got != wantArgs {
		t.Errorf("init args = %q, want %q", got, wantArgs)
	}
	profile, err := os.ReadFile(filepath.Join(profiles, "hearth-local.yaml"))
	if err != nil || !strings.Contains(string(profile), testTunnelID) {
		t.Errorf("profile: %q, %v", profile, err)
	}
	if s.Config().TunnelID != testTunnelID {
		t.Errorf("the tunnel ID was not taken over: %+v", s.Config())
	}
	saved, err := config.Load(cfgPath)
	if err != nil || saved.Tunnel.TunnelID != testTunnelID {
		t.Errorf("config.json tunnel after init: %+v, %v", saved.Tunnel, err)
	}
	if st := s.Status(); st.State != StateStopped {
		t.Errorf("after init with key and client: %+v, want stopped", st)
	}
	// tunnel-client refuses to overwrite the profile: Hearth replaces it
	// (--force), so that the profile holds what Setup shows.
	res, err = s.Init(context.Background(), testTunnelID, "http://127.0.0.1:3001/mcp")
	if err != nil || !res.OK() || res.Args[len(res.Args)-1] != "--force" {
		t.Errorf("second init: %+v, %v", res, err)
	}
	if p, _ := os.ReadFile(filepath.Join(profiles, "hearth-local.yaml")); !strings.Contains(string(p), "http://127.0.0.1:3001/mcp") {
		t.Errorf("the second init did not replace the profile: %q", p)
	}

	res, err = s.Doctor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || !strings.Contains(res.Stdout, "doctor: profile hearth-local explain=true key_set=true") {
		t.Errorf("doctor: %+v", res)
	}

	store.Delete(KeyName)
	res, err = s.Doctor(context.Background())
	if err != nil || res.OK() || !strings.Contains(res.Stdout, "key_set=false") {
		t.Errorf("doctor without a key: %+v, %v", res, err)
	}
	scanForKey(t, profiles, key)
	if b, _ := os.ReadFile(cfgPath); strings.Contains(string(b), key) {
		t.Error("config.json holds the key")
	}
}

func TestSetupOutputRedactedAndBounded(t *testing.T) {
	key := testKey(t)
	t.Setenv("FAKE_TUNNEL_LEAK_KEY", "1")
	s, _, _ := newSupervisor(t, fakeClient(t), testTunnelID, key)
	res, err := s.Doctor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stderr, key) || !strings.Contains(res.Stderr, "refused key "+Redacted) {
		t.Errorf("doctor stderr not redacted: %q", res.Stderr)
	}

	t.Setenv("FAKE_TUNNEL_HANG", "1")
	s.t.setupTimeout = 300 * time.Millisecond
	start := time.Now()
	res, err = s.Doctor(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.OK() || time.Since(start) > 10*time.Second {
		t.Errorf("hanging doctor: %+v after %s", res, time.Since(start))
	}
}

func TestSetupWithoutClient(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	s, _, _ := newSupervisor(t, "", testTunnelID, testKey(t))
	_, err := s.Doctor(context.Background())
	if !errors.Is(err, ErrNotPinned) {
		t.Errorf("doctor without a pinned tunnel-client: %v", err)
	}
	var ce *config.Error
	if _, err := s.Init(context.Background(), "", "http://127.0.0.1:3000/mcp"); !errors.As(err, &ce) {
		t.Errorf("init without a tunnel ID: %v", err)
	}
	// init pins only a tunnel-client beside hearth-tray; here there is none.
	if _, err := s.Init(context.Background(), testTunnelID, "http://127.0.0.1:3000/mcp"); !errors.Is(err, ErrNotPinned) {
		t.Errorf("init without any tunnel-client: %v", err)
	}
}

func TestSetConfigPersists(t *testing.T) {
	s, _, _ := newSupervisor(t, dummyClient(t), "", testKey(t))
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	c := config.Default()
	c.Policy.Mode = config.ModeReadOnly
	if err := config.Write(cfgPath, c); err != nil {
		t.Fatal(err)
	}
	s.configPath = cfgPath
	next := s.Config()
	next.TunnelID, next.Autostart = testTunnelID, true
	if err := s.SetConfig(next); err != nil {
		t.Fatal(err)
	}
	got, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tunnel != next || got.Policy.Mode != config.ModeReadOnly {
		t.Errorf("config.json after SetConfig: tunnel %+v, mode %q", got.Tunnel, got.Policy.Mode)
	}
	if st := s.Status(); st.State != StateStopped {
		t.Errorf("status after SetConfig completed the setup: %+v", st)
	}
	bad := next
	bad.Profile = "-rm"
	if err := s.SetConfig(bad); err == nil || !strings.Contains(err.Error(), "tunnel.profile") {
		t.Errorf("SetConfig accepted a bad profile: %v", err)
	}
	if s.Config() != next {
		t.Error("a refused SetConfig changed the settings")
	}
}
