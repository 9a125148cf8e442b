package tunnel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hearth-dev/hearth/internal/atomicfile"
	"github.com/hearth-dev/hearth/internal/config"
)

// profileFile records what the tunnel-client profile Hearth last made
// holds, so that a changed tunnel ID or MCP address is noticed and the
// profile made again before the next start.
const profileFile = "tunnel-profile.json"

// profileRecord is what Hearth's last successful init wrote into the
// profile.
type profileRecord struct {
	Profile  string `json:"profile"`
	TunnelID string `json:"tunnel_id"`
	MCPURL   string `json:"mcp_server_url"`
}

// SetMCPURL tells the supervisor the address Hearth's MCP endpoint really
// listens on (it may differ from one run to the next: a port taken by
// another program). Every start of tunnel-client first makes sure the
// profile points there and at the saved tunnel ID, running init again
// when either differs from what the profile was made with; a running
// tunnel-client whose profile differs is restarted to take it up. "" (the
// default) leaves the profile alone.
func (s *Supervisor) SetMCPURL(url string) {
	s.mu.Lock()
	s.mcpURL = url
	s.mu.Unlock()
	if s.Running() && s.profileStale(s.Config()) {
		s.log.Info("tunnel: Hearth's MCP address changed; remaking the profile and restarting tunnel-client", "mcp_url", url)
		s.Restart()
	}
}

// MCPURL is the address SetMCPURL gave ("" when none).
func (s *Supervisor) MCPURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mcpURL
}

// profileStale reports whether the profile must be made again before
// tunnel-client runs with cfg: an MCP address is known and the profile
// was not made (by Hearth) with it and cfg's tunnel ID.
func (s *Supervisor) profileStale(cfg config.Tunnel) bool {
	url := s.MCPURL()
	if url == "" || cfg.TunnelID == "" {
		return false
	}
	rec, _ := s.readProfileRecord()
	return rec != profileRecord{Profile: cfg.Profile, TunnelID: cfg.TunnelID, MCPURL: url}
}

// ensureProfile makes the profile again when it is stale (profileStale),
// before a start of tunnel-client. ran says whether init ran; a failed
// init is an error naming its exit and last line, except when Hearth has
// no record of the profile (made before this record existed): then
// tunnel-client runs with the profile there is.
func (s *Supervisor) ensureProfile(ctx context.Context, cfg config.Tunnel) (ran bool, err error) {
	if !s.profileStale(cfg) {
		return false, nil
	}
	url := s.MCPURL()
	_, recErr := s.readProfileRecord()
	res, err := s.makeProfile(ctx, cfg, cfg.TunnelID, url)
	if err == nil && !res.OK() {
		err = fmt.Errorf("tunnel-client init for tunnel %s and %s: %s", cfg.TunnelID, url, commandFailure(res))
	}
	if err != nil && errors.Is(recErr, os.ErrNotExist) && ctx.Err() == nil && !errors.Is(err, ErrClientChanged) {
		// A profile made before Hearth kept this record (an earlier
		// Hearth, or by hand) may well be right: run with it rather than
		// not at all, and say so.
		s.log.Warn("tunnel: could not make the profile again; running with the one there is", "err", err)
		return true, nil
	}
	if err != nil {
		return true, err
	}
	s.log.Info("tunnel: profile made again", "profile", cfg.Profile, "tunnel_id", cfg.TunnelID, "mcp_url", url)
	return true, nil
}

// commandFailure says how a setup command failed: its exit and its last
// line of output.
func commandFailure(res CommandResult) string {
	if res.TimedOut {
		return "did not finish in time"
	}
	last := lastLine(res.Stderr)
	if last == "" {
		last = lastLine(res.Stdout)
	}
	if last == "" {
		return fmt.Sprintf("exit code %d", res.ExitCode)
	}
	return fmt.Sprintf("exit code %d: %s", res.ExitCode, truncate(last, maxErrorLine))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// makeProfile runs tunnel-client init for cfg.Profile with tunnelID and
// mcpURL. A profile that already exists is replaced (init again with
// --force): it may hold an old tunnel ID or address, and Hearth owns the
// profile it names. On success it records what the profile now holds.
func (s *Supervisor) makeProfile(ctx context.Context, cfg config.Tunnel, tunnelID, mcpURL string) (CommandResult, error) {
	args := []string{"init", "--sample", "sample_mcp_remote_no_auth",
		"--profile", cfg.Profile, "--tunnel-id", tunnelID, "--mcp-server-url", mcpURL}
	res, err := s.setupCommand(ctx, cfg, args...)
	if err == nil && !res.OK() && !res.TimedOut && strings.Contains(res.Stdout+res.Stderr, "already exists") {
		s.log.Info("tunnel: the profile exists; replacing it", "profile", cfg.Profile)
		res, err = s.setupCommand(ctx, cfg, append(args, "--force")...)
	}
	if err != nil || !res.OK() {
		return res, err
	}
	if werr := s.writeProfileRecord(profileRecord{Profile: cfg.Profile, TunnelID: tunnelID, MCPURL: mcpURL}); werr != nil {
		// Only costs an init at the next start.
		s.log.Warn("tunnel: remember what the profile holds", "err", werr)
	}
	return res, nil
}

func (s *Supervisor) readProfileRecord() (profileRecord, error) {
	var rec profileRecord
	if s.dataDir == "" {
		return rec, errors.New("no data directory")
	}
	b, err := readSmall(filepath.Join(s.dataDir, profileFile), 4096)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("tunnel: read what the profile holds", "err", err)
		}
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		s.log.Warn("tunnel: read what the profile holds", "file", profileFile, "err", err)
		return profileRecord{}, err
	}
	return rec, nil
}

func (s *Supervisor) writeProfileRecord(rec profileRecord) error {
	if s.dataDir == "" {
		return nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	path := filepath.Join(s.dataDir, profileFile)
	return atomicfile.WriteWith(path, 0o600, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}
