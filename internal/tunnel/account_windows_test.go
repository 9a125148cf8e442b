package tunnel

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
)

// TestAccountTunnelSetup: for a user whose profile path has letters
// outside ASCII and a space (under Wine in CI, "Zoë Ünal": see
// scripts/test-windows), Hearth installed in that profile finds the
// tunnel-client beside it and pins it, runs its init for the profile in
// the data directory there, records what the profile holds, and starts
// the tunnel (ready, in its Job Object) with the health file and log in
// that data directory. The test binary plays tunnel-client (selfFake),
// copied where the installer puts it.
func TestAccountTunnelSetup(t *testing.T) {
	t.Setenv("HEARTH_HOME", "")
	dataRoot, err := config.DataDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := os.Getenv("HEARTH_WINE_PROFILE"); want != "" && !strings.Contains(dataRoot, `\`+want+`\`) {
		t.Fatalf("data directory %s is not in the profile of %q", dataRoot, want)
	}
	if err := os.MkdirAll(dataRoot, 0o700); err != nil {
		t.Fatal(err)
	}
	dataDir, err := os.MkdirTemp(dataRoot, "profile test ")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dataDir) })
	programs := filepath.Join(filepath.Dir(dataRoot), "Programs")
	if err := os.MkdirAll(programs, 0o755); err != nil {
		t.Fatal(err)
	}
	programDir, err := os.MkdirTemp(programs, "Hearth test ")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(programDir) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	client := filepath.Join(programDir, ClientName())
	if err := os.WriteFile(client, b, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(selfFakeEnv, "1")
	initOut := filepath.Join(t.TempDir(), "init.json")
	t.Setenv("FAKE_TUNNEL_INIT_OUT", initOut)

	key := testKey(t)
	store := newMemStore()
	store.Set(KeyName, []byte(key))
	logs := &lockedBuffer{}
	s := New(Options{
		Config:     config.Tunnel{Profile: config.DefaultTunnelProfile},
		DataDir:    dataDir,
		ProgramDir: programDir,
		Secrets:    store,
		Log:        slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	s.t = fastTiming()
	t.Cleanup(s.Stop)

	const mcpURL = "http://127.0.0.1:3000/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.Init(ctx, testTunnelID, mcpURL)
	if err != nil || !res.OK() {
		t.Fatalf("init: %+v %v\n%s", res, err, logs.String())
	}
	if pin, ok := s.Pinned(); !ok || !strings.EqualFold(pin.Path, client) {
		t.Fatalf("pinned %+v %v, want the tunnel-client beside hearth-tray %s", pin, ok, client)
	}
	raw, err := os.ReadFile(initOut)
	if err != nil {
		t.Fatalf("tunnel-client init did not run: %v", err)
	}
	var seen struct {
		Args []string
		Dir  string
	}
	if err := json.Unmarshal(raw, &seen); err != nil {
		t.Fatal(err)
	}
	want := []string{"init", "--sample", "sample_mcp_remote_no_auth", "--profile", config.DefaultTunnelProfile,
		"--tunnel-id", testTunnelID, "--mcp-server-url", mcpURL}
	if !slices.Equal(seen.Args, want) || !strings.EqualFold(seen.Dir, dataDir) {
		t.Fatalf("init ran with %q in %q, want %q in %q", seen.Args, seen.Dir, want, dataDir)
	}
	rec, err := s.readProfileRecord()
	if err != nil || rec != (profileRecord{Profile: config.DefaultTunnelProfile, TunnelID: testTunnelID, MCPURL: mcpURL}) {
		t.Fatalf("profile record in %s: %+v %v", dataDir, rec, err)
	}

	s.SetMCPURL(mcpURL)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "ready", 60*time.Second, stateIs(StateReady))
	if !inJob(t, st.PID) {
		t.Error("tunnel-client does not run in a Job Object")
	}
	s.Stop()
	waitDead(t, st.PID, "tunnel-client")
	if log := readLog(s); !strings.Contains(log, "key_set=true") {
		t.Errorf("the tunnel log in %s lacks the run:\n%s", dataDir, log)
	}
	scanForKey(t, dataDir, key)
}
