package app_test

import (
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
	for _, want := range []string{"no tunnel ID", "no tunnel runtime key", "not found"} {
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

// TestTunnelAutostartAndShutdown: with tunnel.autostart and everything
// configured, Serve starts tunnel-client (a fake), host_info reports it
// ready, and shutting Hearth down stops it.
func TestTunnelAutostartAndShutdown(t *testing.T) {
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
	home := t.TempDir()
	store, err := secrets.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Set(tunnel.KeyName, []byte("sk-app-test-0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	in := hearthtest.StartHome(t, home, func(c *config.Config) {
		c.Tunnel = config.Tunnel{ClientPath: fake, TunnelID: "tunnel_apptest", Profile: "hearth-local", Autostart: true}
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
