package tunnel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-dev/hearth/internal/config"
)

// TestInitKeepsPinSavedMeanwhile: a pin saved while tunnel-client init
// runs (the operator pins another tunnel-client in another tab) is kept
// when Init saves the tunnel ID, in config.json and in memory, and the
// pin was reported to OnPinned.
func TestInitKeepsPinSavedMeanwhile(t *testing.T) {
	t.Setenv("FAKE_TUNNEL_PROFILE_DIR", t.TempDir())
	first := copyClient(t, fakeClient(t), "")
	s, _, _ := newSupervisor(t, first, "", testKey(t))
	cfgPath := withConfigFile(t, s)
	var mu sync.Mutex
	var denied []string
	s.onPinned = func(path string) {
		mu.Lock()
		denied = append(denied, path)
		mu.Unlock()
	}
	second := copyClient(t, fakeClient(t), "second")
	sum, err := fileSHA256(second)
	if err != nil {
		t.Fatal(err)
	}
	hooked := false
	s.seams.initSave = func() {
		hooked = true
		if _, err := s.PinClient(second, sum); err != nil {
			t.Errorf("pin while init runs: %v", err)
		}
	}
	res, err := s.Init(context.Background(), testTunnelID, "http://127.0.0.1:3000/mcp")
	if err != nil || !res.OK() || !hooked {
		t.Fatalf("init: %+v, %v (hook ran: %v)", res, err, hooked)
	}
	want := config.Tunnel{TunnelID: testTunnelID, Profile: "hearth-local", ClientPath: second, ClientSHA256: sum}
	if got := s.Config(); got != want {
		t.Errorf("settings in memory after init:\n got %+v\nwant %+v", got, want)
	}
	saved, err := config.Load(cfgPath)
	if err != nil || saved.Tunnel != want {
		t.Errorf("config.json after init (%v):\n got %+v\nwant %+v", err, saved.Tunnel, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(denied, []string{second}) {
		t.Errorf("OnPinned got %q, want only %q", denied, second)
	}
}

// TestPinAndTunnelIDSavedTogether: pins and changes of the tunnel ID made
// at the same moment each change only their own settings, so both
// survive every time: a pin never writes back a tunnel ID it read before
// another change saved a new one, nor the other way round.
func TestPinAndTunnelIDSavedTogether(t *testing.T) {
	clients := [2]string{dummyClient(t), copyClient(t, dummyClient(t), "other")}
	var sums [2]string
	for i, c := range clients {
		sum, err := fileSHA256(c)
		if err != nil {
			t.Fatal(err)
		}
		sums[i] = sum
	}
	s, _, _ := newSupervisor(t, "", "", "")
	cfgPath := withConfigFile(t, s)
	for i := range 30 {
		id := fmt.Sprintf("tunnel_%032x", i)
		k := i % 2
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			<-start
			if _, err := s.PinClient(clients[k], sums[k]); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			<-start
			if err := s.UpdateConfig(func(c *config.Tunnel) error { c.TunnelID = id; return nil }); err != nil {
				t.Error(err)
			}
		})
		close(start)
		wg.Wait()
		want := config.Tunnel{TunnelID: id, Profile: "hearth-local", ClientPath: clients[k], ClientSHA256: sums[k]}
		if got := s.Config(); got != want {
			t.Fatalf("round %d, in memory:\n got %+v\nwant %+v", i, got, want)
		}
		if saved, err := config.Load(cfgPath); err != nil || saved.Tunnel != want {
			t.Fatalf("round %d, config.json (%v):\n got %+v\nwant %+v", i, err, saved.Tunnel, want)
		}
	}
}

// TestUpdateConfigRefusalChangesNothing: an update whose change fails,
// or whose result is not valid, leaves the settings and config.json as
// they were, and the error names the field.
func TestUpdateConfigRefusalChangesNothing(t *testing.T) {
	s, _, _ := newSupervisor(t, dummyClient(t), testTunnelID, "")
	cfgPath := withConfigFile(t, s)
	before := s.Config()
	stat := func() string {
		b, err := os.ReadFile(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	file := stat()
	boom := errors.New("boom")
	if err := s.UpdateConfig(func(c *config.Tunnel) error { c.TunnelID = ""; return boom }); !errors.Is(err, boom) {
		t.Errorf("failing change: %v", err)
	}
	err := s.UpdateConfig(func(c *config.Tunnel) error { c.Profile = "../evil"; return nil })
	if err == nil || !strings.Contains(err.Error(), "tunnel.profile") {
		t.Errorf("invalid result: %v", err)
	}
	if s.Config() != before || stat() != file {
		t.Errorf("a refused update changed the settings: %+v", s.Config())
	}
}

// TestUpdateConfigWritesOnlyItsKeys: a change of the tunnel settings
// (Stop's "don't connect at start", a pin) writes the keys it changed
// into config.json and leaves every other byte of the person's file as it
// was: no default of this version added, their spacing, order and other
// keys kept.
func TestUpdateConfigWritesOnlyItsKeys(t *testing.T) {
	s, _, _ := newSupervisorConfig(t, config.Tunnel{TunnelID: testTunnelID, Autostart: true}, testKey(t))
	path := filepath.Join(t.TempDir(), "config.json")
	mine := "{\n  \"policy\": {\"mode\": \"ask\"},\n\n  \"tunnel\": {\"tunnel_id\": \"" + testTunnelID + "\",   \"autostart\": true}\n}\n"
	if err := os.WriteFile(path, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	s.configPath = path
	if err := s.UpdateConfig(func(c *config.Tunnel) error { c.Autostart = false; return nil }); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(mine, `"autostart": true`, `"autostart": false`, 1); string(got) != want {
		t.Fatalf("config.json after turning tunnel.autostart off:\n%s\nwant:\n%s", got, want)
	}
	if s.Config().Autostart {
		t.Fatal("the setting in effect is still on")
	}
	// Two keys at once, one of them missing from the file: both written,
	// nothing else.
	if err := s.UpdateConfig(func(c *config.Tunnel) error { c.Autostart, c.Profile = true, "mine"; return nil }); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Tunnel.Autostart || c.Tunnel.Profile != "mine" || c.Tunnel.TunnelID != testTunnelID {
		t.Fatalf("config.json's tunnel after two changes: %+v", c.Tunnel)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "client_path") || strings.Contains(string(b), "storage_budget_bytes") {
		t.Fatalf("config.json got keys nobody changed:\n%s", b)
	}
}
