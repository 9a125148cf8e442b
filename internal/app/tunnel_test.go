package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/hearthtest"
	"github.com/hearth-dev/hearth/internal/secrets"
	"github.com/hearth-dev/hearth/internal/tunnel"
)

// hostInfoTunnel returns host_info's tunnel object and unavailable list.
func hostInfoTunnel(t *testing.T, url string) (map[string]any, []any) {
	t.Helper()
	r := hearthtest.Connect(t, url, "tunnel-test").Call("machine", map[string]any{"operation": "host_info"})
	tun, _ := r.Get("result.tunnel").(map[string]any)
	if tun == nil {
		t.Fatalf("host_info has no tunnel object: %v", r.Env)
	}
	unavailable, _ := r.Get("result.unavailable").([]any)
	return tun, unavailable
}

func TestHostInfoTunnelNotConfigured(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	in := hearthtest.Start(t, nil)
	tun, unavailable := hostInfoTunnel(t, in.URL)
	if tun["state"] != "not_configured" {
		t.Errorf("tunnel = %v, want not_configured", tun)
	}
	reason, _ := tun["reason"].(string)
	for _, want := range []string{"no tunnel ID", "no tunnel runtime key", "not pinned"} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q does not say %q", reason, want)
		}
	}
	for _, u := range unavailable {
		if s, _ := u.(string); strings.Contains(s, "tunnel") {
			t.Errorf("unavailable still lists %q", s)
		}
	}
	if err := in.App.StartTunnel(); err == nil {
		t.Error("StartTunnel succeeded without a configuration")
	}
}

// buildFakeClient builds the tunnel package's fake tunnel-client and
// returns its path and SHA-256; the test is skipped without a go command.
func buildFakeClient(t *testing.T) (path, sum string) {
	t.Helper()
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the fake tunnel-client")
	}
	fake := filepath.Join(t.TempDir(), "tunnel-client")
	if runtime.GOOS == "windows" {
		fake += ".exe"
	}
	if out, err := exec.Command(gocmd, "build", "-o", fake, "../tunnel/testdata/faketunnel").CombinedOutput(); err != nil {
		t.Fatalf("build fake tunnel-client: %v\n%s", err, out)
	}
	b, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return fake, hex.EncodeToString(h[:])
}

// homeWithKey returns a data directory whose secrets store holds a key.
func homeWithKey(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	store, err := secrets.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Set(tunnel.KeyName, []byte("sk-app-test-0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	return home
}

// TestTunnelAutostartAndShutdown: with tunnel.autostart and everything
// configured, Serve starts tunnel-client (a fake), host_info reports it
// ready, and shutting Hearth down stops it.
func TestTunnelAutostartAndShutdown(t *testing.T) {
	fake, sum := buildFakeClient(t)
	in := hearthtest.StartHome(t, homeWithKey(t), func(c *config.Config) {
		c.Tunnel = config.Tunnel{ClientPath: fake, ClientSHA256: sum, TunnelID: "tunnel_apptest", Profile: "hearth-local", Autostart: true}
	})
	deadline := time.Now().Add(30 * time.Second)
	for in.App.Tunnel.Status().State != tunnel.StateReady {
		if time.Now().After(deadline) {
			t.Fatalf("tunnel never ready: %+v", in.App.Tunnel.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tun, _ := hostInfoTunnel(t, in.URL)
	if tun["state"] != "ready" {
		t.Errorf("host_info tunnel = %v", tun)
	}
	// Shutdown stops the tunnel first and waits for tunnel-client to exit.
	in.Stop()
	if st := in.App.Tunnel.Status(); st.State != tunnel.StateStopped || st.PID != 0 {
		t.Errorf("after shutdown: %+v", st)
	}
	log, err := os.ReadFile(in.App.Tunnel.LogPath())
	if err != nil || !strings.Contains(string(log), "fake tunnel: graceful stop") {
		t.Errorf("tunnel log after shutdown (%v):\n%s", err, log)
	}
}

// TestHostInfoTunnelClientChanged: a tunnel-client planted over the pinned
// file (another hash) is not started at autostart, and host_info says
// client_changed, naming the file and the operator's way out.
func TestHostInfoTunnelClientChanged(t *testing.T) {
	fake, sum := buildFakeClient(t)
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	b, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fake, append(b, "planted"...), 0o700); err != nil {
		t.Fatal(err)
	}
	in := hearthtest.StartHome(t, homeWithKey(t), func(c *config.Config) {
		c.Tunnel = config.Tunnel{ClientPath: fake, ClientSHA256: sum, TunnelID: "tunnel_apptest", Profile: "hearth-local", Autostart: true}
	})
	deadline := time.Now().Add(30 * time.Second)
	for in.App.Tunnel.Status().State != tunnel.StateClientChanged {
		if time.Now().After(deadline) {
			t.Fatalf("tunnel never client_changed: %+v", in.App.Tunnel.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tun, _ := hostInfoTunnel(t, in.URL)
	reason, _ := tun["reason"].(string)
	if tun["state"] != string(tunnel.StateClientChanged) || !strings.Contains(reason, fake) || !strings.Contains(reason, "Setup page") {
		t.Errorf("host_info tunnel = %v", tun)
	}
	if err := in.App.StartTunnel(); !errors.Is(err, tunnel.ErrClientChanged) {
		t.Errorf("StartTunnel of a planted client: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(starts); !errors.Is(err, os.ErrNotExist) || in.App.Tunnel.Running() {
		t.Errorf("the planted client was started (%v), running %v", err, in.App.Tunnel.Running())
	}
}

// TestPinnedClientDeniedToFS: the tunnel-client pinned at start cannot be
// written through fs even when its directory is a root; the directory's
// other files still can.
func TestPinnedClientDeniedToFS(t *testing.T) {
	fake, sum := buildFakeClient(t)
	dir := filepath.Dir(fake)
	in := hearthtest.StartHome(t, t.TempDir(), func(c *config.Config) {
		hearthtest.Trusted(c)
		c.Roots = []string{dir}
		c.Tunnel = config.Tunnel{ClientPath: fake, ClientSHA256: sum, TunnelID: "tunnel_apptest", Profile: "hearth-local"}
	})
	c := hearthtest.Connect(t, in.URL, "pin-denied")
	r := c.Call("fs", map[string]any{"operation": "write", "path": fake, "data": "planted", "expected_sha256": sum})
	if r.Get("error.code") != "outside_roots" || r.Get("error.details.rule") != "denied_directory" {
		t.Fatalf("fs.write over the pinned tunnel-client: %s", r.Raw)
	}
	if r := c.Call("fs", map[string]any{"operation": "read", "path": fake}); r.Get("error.details.rule") != "denied_directory" {
		t.Fatalf("fs.read of the pinned tunnel-client: %s", r.Raw)
	}
	b, err := os.ReadFile(fake)
	if h := sha256.Sum256(b); err != nil || hex.EncodeToString(h[:]) != sum {
		t.Fatalf("the pinned tunnel-client changed (%v)", err)
	}
	if r := c.Call("fs", map[string]any{"operation": "write", "path": filepath.Join(dir, "notes.txt"), "data": "ok", "expected_sha256": nil}); r.State() != "completed" {
		t.Fatalf("fs.write beside the pinned tunnel-client: %s", r.Raw)
	}
}

// TestClientPinnedWhileRunningDeniedToFS: a tunnel-client in an fs root
// that the operator pins while Hearth runs (the Setup page's PinClient)
// is denied to fs from that moment, for reading and writing, and stays
// unchanged; the file beside it is still writable.
func TestClientPinnedWhileRunningDeniedToFS(t *testing.T) {
	fake, sum := buildFakeClient(t)
	dir := filepath.Dir(fake)
	in := hearthtest.StartHome(t, t.TempDir(), func(c *config.Config) {
		hearthtest.Trusted(c)
		c.Roots = []string{dir}
		c.Tunnel = config.Tunnel{TunnelID: "tunnel_apptest", Profile: "hearth-local"}
	})
	c := hearthtest.Connect(t, in.URL, "pin-denied-live")
	if r := c.Call("fs", map[string]any{"operation": "read", "path": fake, "limit": 16, "encoding": "base64"}); r.State() != "completed" {
		t.Fatalf("fs.read of a tunnel-client nothing pinned yet: %s", r.Raw)
	}
	if _, err := in.App.Tunnel.PinClient(fake, sum); err != nil {
		t.Fatal(err)
	}
	r := c.Call("fs", map[string]any{"operation": "write", "path": fake, "data": "planted", "expected_sha256": sum})
	if r.Get("error.code") != "outside_roots" || r.Get("error.details.rule") != "denied_directory" {
		t.Fatalf("fs.write over the tunnel-client pinned while running: %s", r.Raw)
	}
	if r := c.Call("fs", map[string]any{"operation": "read", "path": fake}); r.Get("error.details.rule") != "denied_directory" {
		t.Fatalf("fs.read of the tunnel-client pinned while running: %s", r.Raw)
	}
	if err := in.App.Tunnel.VerifyClient(); err != nil {
		t.Fatalf("the pinned tunnel-client changed: %v", err)
	}
	if r := c.Call("fs", map[string]any{"operation": "write", "path": filepath.Join(dir, "notes.txt"), "data": "ok", "expected_sha256": nil}); r.State() != "completed" {
		t.Fatalf("fs.write beside the pinned tunnel-client: %s", r.Raw)
	}
}

// TestTunnelUpgradeAutoPin: a config.json from before pinning (tunnel ID,
// key and autostart, no tunnel.client_sha256) gets the tunnel-client
// beside hearth-tray pinned at start, journaled in the ledger, and the
// tunnel starts unattended. A tunnel-client found only on PATH is never
// pinned: the tunnel stays not set up, saying to pin it on the Setup page.
func TestTunnelUpgradeAutoPin(t *testing.T) {
	fake, sum := buildFakeClient(t)
	upgraded := func(c *config.Config) {
		c.Tunnel = config.Tunnel{TunnelID: "tunnel_apptest", Profile: "hearth-local", Autostart: true}
	}
	t.Setenv("PATH", filepath.Dir(fake))
	in := hearthtest.StartHome(t, homeWithKey(t), upgraded)
	deadline := time.Now().Add(30 * time.Second)
	for st := in.App.Tunnel.Status(); st.State != tunnel.StateNotConfigured || !strings.Contains(st.Reason, "pin it on the Setup page"); st = in.App.Tunnel.Status() {
		if time.Now().After(deadline) {
			t.Fatalf("with tunnel-client only on PATH: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pin, ok := in.App.Tunnel.Pinned(); ok {
		t.Fatalf("a tunnel-client on PATH was pinned: %+v", pin)
	}
	in.Stop()

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(filepath.Dir(exe), filepath.Base(fake))
	b, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(beside, b, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(beside) })
	in = hearthtest.StartHome(t, homeWithKey(t), upgraded)
	deadline = time.Now().Add(30 * time.Second)
	for in.App.Tunnel.Status().State != tunnel.StateReady {
		if time.Now().After(deadline) {
			t.Fatalf("tunnel never ready after the automatic pin: %+v", in.App.Tunnel.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pin, ok := in.App.Tunnel.Pinned(); !ok || pin.Path != beside || pin.SHA256 != sum {
		t.Fatalf("pin = %+v, %v; want %s with %s", pin, ok, beside, sum)
	}
	saved, err := config.Load(filepath.Join(in.Home, "config.json"))
	if err != nil || saved.Tunnel.ClientPath != beside || saved.Tunnel.ClientSHA256 != sum {
		t.Errorf("config.json tunnel: %+v, %v", saved.Tunnel, err)
	}
	entries, err := in.App.Ledger.Tail(context.Background(), 50)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		if e.Kind == tunnel.KindClientPinned && strings.Contains(string(e.Data), sum) {
			found = true
		}
	}
	if !found {
		t.Error("the automatic pin is not in the ledger")
	}
}
