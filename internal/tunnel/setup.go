package tunnel

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/hearth-dev/hearth/internal/config"
	"github.com/hearth-dev/hearth/internal/proc"
	"github.com/hearth-dev/hearth/internal/secrets"
)

// maxSetupOutput bounds what Init and Doctor keep of each output stream.
const maxSetupOutput = 64 << 10

// minKeyLen is the shortest runtime key SetKey accepts; anything shorter
// is a paste gone wrong, and KeyHint's last four characters must not be
// most of the key.
const minKeyLen = 12

// CommandResult is the outcome of a setup command (init, doctor).
type CommandResult struct {
	// Args is the argv after the program; it never holds the key.
	Args     []string `json:"args"`
	ExitCode int      `json:"exit_code"`
	// Stdout and Stderr are the decoded output, key redacted, each cut at
	// 64 KiB (Truncated).
	Stdout    string        `json:"stdout"`
	Stderr    string        `json:"stderr"`
	Truncated bool          `json:"truncated,omitempty"`
	TimedOut  bool          `json:"timed_out,omitempty"`
	Duration  time.Duration `json:"duration_ns"`
}

// OK reports whether the command ran to a zero exit.
func (r CommandResult) OK() bool { return r.ExitCode == 0 && !r.TimedOut }

// Init creates the tunnel-client profile for Hearth:
//
//	tunnel-client init --sample sample_mcp_remote_no_auth --profile <profile>
//	  --tunnel-id <tunnelID> --mcp-server-url <mcpURL>
//
// mcpURL is Hearth's MCP endpoint (App.MCPURL). When no tunnel-client is
// pinned yet, Init pins the one beside hearth-tray (PinBesideExe), which
// the model cannot have put there; it never pins one from PATH or
// elsewhere (ErrNotPinned: the operator pins it on the Setup page,
// seeing its SHA-256). On success the tunnel ID becomes
// tunnel.tunnel_id (persisted like SetConfig; UpdateConfig changes no
// other setting, so a pin saved while init ran stays). A profile that
// exists already is replaced (init again with --force), so that a
// corrected tunnel ID or a new address takes effect; a running
// tunnel-client is restarted when the tunnel ID changed (UpdateConfig).
// The error is non-nil only when nothing could be run (or the tunnel ID
// could not be saved).
func (s *Supervisor) Init(ctx context.Context, tunnelID, mcpURL string) (CommandResult, error) {
	id := strings.TrimSpace(tunnelID)
	if id == "" {
		return CommandResult{}, &config.Error{Key: "tunnel.tunnel_id", Msg: "is empty"}
	}
	probe := s.Config()
	probe.TunnelID = id
	if err := probe.Validate(); err != nil {
		return CommandResult{}, err
	}
	if err := checkMCPURL(mcpURL); err != nil {
		return CommandResult{}, err
	}
	if _, ok := s.Pinned(); !ok {
		_, pinned, err := s.PinBesideExe("the operator's init on the Setup page, with nothing pinned: the tunnel-client beside hearth-tray")
		if err != nil {
			return CommandResult{}, err
		}
		if !pinned {
			return CommandResult{}, ErrNotPinned
		}
	}
	cfg := s.Config()
	res, err := s.makeProfile(ctx, cfg, id, mcpURL)
	if err != nil || !res.OK() {
		return res, err
	}
	if s.seams.initSave != nil {
		s.seams.initSave()
	}
	// Only the tunnel ID changes: a pin saved while init ran (another
	// tab) stays, which cfg, read before it, does not have.
	return res, s.UpdateConfig(func(t *config.Tunnel) error {
		t.TunnelID = id
		return nil
	})
}

// Doctor runs `tunnel-client doctor --profile <profile> --explain`.
func (s *Supervisor) Doctor(ctx context.Context) (CommandResult, error) {
	cfg := s.Config()
	return s.setupCommand(ctx, cfg, "doctor", "--profile", cfg.Profile, "--explain")
}

// setupCommand runs the pinned tunnel-client (hashed again first) with
// args, bounded by setupTimeout and ctx, with the key (when there is one)
// in its environment only.
func (s *Supervisor) setupCommand(ctx context.Context, cfg config.Tunnel, args ...string) (CommandResult, error) {
	cl, err := s.openClient(cfg)
	if err != nil {
		var changed *ClientChangedError
		if errors.As(err, &changed) {
			s.Check("")
		}
		return CommandResult{}, err
	}
	// Held open until the command ends: the file it runs cannot be
	// swapped meanwhile.
	defer cl.Close()
	key, err := s.readKey()
	if err != nil && !errors.Is(err, secrets.ErrNotFound) {
		return CommandResult{}, errors.New("the tunnel runtime key cannot be read from the secrets store")
	}
	var env map[string]string
	if key != "" {
		env = map[string]string{EnvKey: key}
	}
	res, err := proc.Run(ctx, proc.Spec{
		Command: cl.Path, Args: args, Dir: s.dataDir, Env: env,
		Timeout: s.t.setupTimeout, MaxCapture: maxSetupOutput,
	})
	if err != nil {
		return CommandResult{}, fmt.Errorf("run tunnel-client %s (%s): %s", args[0], cl.Name, redact(err.Error(), key))
	}
	stdout, _ := proc.Decode(res.Stdout)
	stderr, _ := proc.Decode(res.Stderr)
	out := CommandResult{
		Args:      args,
		ExitCode:  res.ExitCode,
		Stdout:    redact(stdout, key),
		Stderr:    redact(stderr, key),
		Truncated: res.StdoutTruncated || res.StderrTruncated,
		TimedOut:  res.TimedOut,
		Duration:  res.Duration,
	}
	s.log.Info("tunnel: setup command", "cmd", args[0], "exit", res.ExitCode, "timed_out", res.TimedOut)
	return out, nil
}

// checkMCPURL accepts an absolute http(s) URL without credentials.
func checkMCPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Errorf("MCP server URL %q is not an http(s) URL", raw)
	}
	return nil
}

// SetKey stores the tunnel runtime key (surrounding white space removed)
// and records tunnel_key_set in the ledger with only its last four
// characters. A running tunnel-client is restarted so that the new key
// takes effect, and the status says so (starting) at once: a refusal of
// the old key is never shown as the new key's. Errors never quote the
// key.
func (s *Supervisor) SetKey(key string) error {
	key = strings.TrimSpace(key)
	if err := checkKey(key); err != nil {
		return err
	}
	s.keyMu.Lock()
	if err := s.secrets.Set(KeyName, []byte(key)); err != nil {
		s.keyMu.Unlock()
		return fmt.Errorf("store the tunnel runtime key: %w", err)
	}
	s.mu.Lock()
	s.keyGen++
	r := s.run
	s.mu.Unlock()
	s.keyMu.Unlock()
	if s.journal != nil {
		if _, err := s.journal.Append(context.Background(), KindKeySet, map[string]any{"last4": key[len(key)-4:]}); err != nil {
			return fmt.Errorf("the tunnel runtime key was stored but not recorded in the ledger: %w", err)
		}
	}
	s.log.Info("tunnel: runtime key set")
	if s.Restart() {
		// What the old key got (refused, say) is no longer the state:
		// the child restarts with the new one, and nothing the old child
		// still reports changes that (keyGen).
		s.update(r, func(st *Status) {
			st.State, st.Reason, st.LastError = StateStarting, "connecting with the new tunnel key", ""
		})
	} else {
		// A key refused before no longer applies: the new one is not
		// tried yet.
		s.update(nil, func(st *Status) {
			if st.State == StateKeyRefused {
				st.State, st.Reason = StateStopped, "a new tunnel key is saved; not started yet"
			}
		})
		s.Check("")
	}
	return nil
}

// checkKey refuses what cannot be a runtime key, without quoting it.
func checkKey(key string) error {
	switch {
	case key == "":
		return errors.New("the tunnel key is empty")
	case len(key) < minKeyLen:
		return fmt.Errorf("the tunnel key is too short (%d characters; tunnel keys are much longer): copy the whole key", len(key))
	case len(key) > secrets.MaxSecretSize:
		return fmt.Errorf("the tunnel key is too long (%d bytes; at most %d): paste only the key", len(key), secrets.MaxSecretSize)
	}
	for _, c := range key {
		if unicode.IsSpace(c) || unicode.IsControl(c) || c > unicode.MaxASCII {
			return errors.New("the tunnel key contains spaces or characters a tunnel key does not have; paste it again")
		}
	}
	return nil
}

// ClearKey stops the tunnel, deletes the key and records
// tunnel_key_cleared. Clearing an absent key does nothing.
func (s *Supervisor) ClearKey() error {
	ok, err := s.KeyPresent()
	if err != nil {
		return err
	}
	if !ok {
		return nil
	}
	s.Stop()
	if err := s.secrets.Delete(KeyName); err != nil && !errors.Is(err, secrets.ErrNotFound) {
		return fmt.Errorf("delete the tunnel runtime key: %w", err)
	}
	if s.journal != nil {
		if _, err := s.journal.Append(context.Background(), KindKeyCleared, nil); err != nil {
			return fmt.Errorf("the tunnel runtime key was deleted but not recorded in the ledger: %w", err)
		}
	}
	s.log.Info("tunnel: runtime key cleared")
	s.Check("")
	return nil
}

// KeyPresent reports whether a runtime key is stored, without reading it
// where the platform allows.
func (s *Supervisor) KeyPresent() (bool, error) {
	if s.secrets == nil {
		return false, nil
	}
	ok, err := s.secrets.Present(KeyName)
	if err != nil {
		return false, fmt.Errorf("read the secrets store: %w", err)
	}
	return ok, nil
}

// KeyHint returns "…" and the key's last four characters, or "" when no
// key is stored (or it cannot be read). It is all Hearth ever shows of
// the key.
func (s *Supervisor) KeyHint() string {
	if s.secrets == nil {
		return ""
	}
	key, err := s.readKey()
	if err != nil {
		if !errors.Is(err, secrets.ErrNotFound) {
			s.log.Warn("tunnel: read key for its hint", "err", err)
		}
		return ""
	}
	if len(key) < minKeyLen {
		return "…"
	}
	return "…" + key[len(key)-4:]
}
