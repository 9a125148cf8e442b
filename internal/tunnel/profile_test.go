package tunnel

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-dev/hearth/internal/config"
)

const otherTunnelID = "tunnel_fedcba9876543210fedcba9876543210"

// profileOf reads the FAKE tunnel-client's profile.
func profileOf(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "hearth-local.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitStart waits for a start line of the FAKE tunnel-client that holds
// want and returns it.
func waitStart(t *testing.T, s *Supervisor, starts, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(starts)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if last := lines[len(lines)-1]; strings.Contains(last, want) {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("no start of tunnel-client with %q; starts:\n%s\nlog:\n%s", want, b, readLog(s))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCorrectedTunnelIDTakesEffect: a corrected tunnel ID makes the
// profile again (tunnel-client init refuses to overwrite it without
// --force) and restarts the running tunnel-client with it; a new MCP
// address does the same. Checked against the FAKE tunnel-client, which
// records the profile each start runs with.
func TestCorrectedTunnelIDTakesEffect(t *testing.T) {
	profiles := t.TempDir()
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_PROFILE_DIR", profiles)
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	s, _, _ := newSupervisor(t, fakeClient(t), "", testKey(t))
	url1, url2 := "http://127.0.0.1:3000/mcp", "http://127.0.0.1:3001/mcp"
	ctx := context.Background()

	res, err := s.Init(ctx, testTunnelID, url1)
	if err != nil || !res.OK() {
		t.Fatalf("first init: %+v, %v", res, err)
	}
	s.SetMCPURL(url1)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "ready", 30*time.Second, stateIs(StateReady))
	waitStart(t, s, starts, "tunnel_id="+testTunnelID+" mcp_server_url="+url1)
	s.NoteChatGPTCall(time.Now())

	// The operator corrects the tunnel ID: init replaces the profile.
	res, err = s.Init(ctx, otherTunnelID, url1)
	if err != nil || !res.OK() {
		t.Fatalf("init with the corrected tunnel ID: %+v, %v", res, err)
	}
	if !strings.Contains(strings.Join(res.Args, " "), "--tunnel-id "+otherTunnelID) || res.Args[len(res.Args)-1] != "--force" {
		t.Errorf("init over an existing profile: args %q, want the new tunnel ID and --force", res.Args)
	}
	if p := profileOf(t, profiles); !strings.Contains(p, "tunnel_id: "+otherTunnelID) {
		t.Fatalf("the profile keeps the old tunnel ID:\n%s", p)
	}
	if s.Config().TunnelID != otherTunnelID {
		t.Errorf("tunnel ID in effect: %q", s.Config().TunnelID)
	}
	// The running tunnel-client is restarted with it, and is ready again.
	waitStart(t, s, starts, "tunnel_id="+otherTunnelID+" mcp_server_url="+url1)
	waitFor(t, s, "ready with the new tunnel ID", 30*time.Second, stateIs(StateReady))
	if at := s.FirstChatGPTCall(); !at.IsZero() {
		t.Errorf("ChatGPT's first call through the old tunnel still counts: %v", at)
	}

	// Hearth's MCP endpoint moved (its port was taken): the profile is
	// made again with the new address, and tunnel-client restarted.
	s.SetMCPURL(url2)
	waitStart(t, s, starts, "tunnel_id="+otherTunnelID+" mcp_server_url="+url2)
	if p := profileOf(t, profiles); !strings.Contains(p, "mcp_server_url: "+url2) {
		t.Fatalf("the profile keeps the old address:\n%s", p)
	}
	waitFor(t, s, "ready at the new address", 30*time.Second, stateIs(StateReady))

	// A tunnel ID saved on its own (config edit, Setup's step 3) is
	// taken up at the restart it causes, without an explicit init.
	if err := s.UpdateConfig(func(c *config.Tunnel) error { c.TunnelID = testTunnelID; return nil }); err != nil {
		t.Fatal(err)
	}
	waitStart(t, s, starts, "tunnel_id="+testTunnelID+" mcp_server_url="+url2)
	if p := profileOf(t, profiles); !strings.Contains(p, "tunnel_id: "+testTunnelID) {
		t.Fatalf("the profile keeps the old tunnel ID after a config change:\n%s", p)
	}
}

// TestProfileNotReplaceableIsAFailure: a tunnel-client that cannot
// replace a profile (no --force) makes init fail, saying so, instead of
// keeping the old profile as if it had worked.
func TestProfileNotReplaceableIsAFailure(t *testing.T) {
	profiles := t.TempDir()
	t.Setenv("FAKE_TUNNEL_PROFILE_DIR", profiles)
	t.Setenv("FAKE_TUNNEL_NO_FORCE", "1")
	s, _, _ := newSupervisor(t, fakeClient(t), "", testKey(t))
	ctx := context.Background()
	if res, err := s.Init(ctx, testTunnelID, "http://127.0.0.1:3000/mcp"); err != nil || !res.OK() {
		t.Fatalf("first init: %+v, %v", res, err)
	}
	res, err := s.Init(ctx, otherTunnelID, "http://127.0.0.1:3000/mcp")
	if err != nil || res.OK() {
		t.Fatalf("init over a profile this tunnel-client cannot replace: %+v, %v; want a failed result", res, err)
	}
	if !strings.Contains(res.Stderr, "force") {
		t.Errorf("the failure does not say why: %q", res.Stderr)
	}
	if s.Config().TunnelID != testTunnelID {
		t.Errorf("a tunnel ID whose profile failed was saved: %q", s.Config().TunnelID)
	}
}

// TestStaleProfileThatCannotBeRemadeIsNotRun: a profile Hearth knows was
// made for another tunnel ID, which this tunnel-client cannot replace (no
// --force), is not run as if it were right: the tunnel waits, saying
// why. A profile Hearth has no record of (made before the record existed)
// is run as it is.
func TestStaleProfileThatCannotBeRemadeIsNotRun(t *testing.T) {
	profiles := t.TempDir()
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv("FAKE_TUNNEL_PROFILE_DIR", profiles)
	t.Setenv("FAKE_TUNNEL_STARTS", starts)
	t.Setenv("FAKE_TUNNEL_NO_FORCE", "1")
	url := "http://127.0.0.1:3000/mcp"
	s, _, _ := newSupervisor(t, fakeClient(t), "", testKey(t))
	ctx := context.Background()
	if res, err := s.Init(ctx, testTunnelID, url); err != nil || !res.OK() {
		t.Fatalf("init: %+v, %v", res, err)
	}
	s.SetMCPURL(url)
	// The tunnel ID changes in config.json (not through init).
	if err := s.UpdateConfig(func(c *config.Tunnel) error { c.TunnelID = otherTunnelID; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	st := waitFor(t, s, "backoff, the profile not made", 30*time.Second, stateIs(StateBackoff))
	if !strings.Contains(st.Reason, "could not be prepared") || !strings.Contains(st.LastError, "force") {
		t.Errorf("the waiting tunnel does not say why: %+v", st)
	}
	if b, _ := os.ReadFile(starts); len(b) > 0 {
		t.Errorf("tunnel-client ran with the stale profile:\n%s", b)
	}
	s.Stop()

	// Without Hearth's record, the profile there is runs.
	if err := os.Remove(filepath.Join(s.dataDir, profileFile)); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, s, "ready with the profile there is", 30*time.Second, stateIs(StateReady))
}
