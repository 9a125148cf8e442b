// Package config loads and validates Hearth's config.json. A config file
// with an unknown key or a bad value is refused with an error naming the key,
// because a silently ignored typo in a safety setting is worse than a
// refusal to start.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Policy modes (docs/DESIGN.md, "Governance").
const (
	ModeAsk      = "ask"
	ModeTrusted  = "trusted"
	ModeReadOnly = "read-only"
)

// Config is the whole of config.json. Field names are the JSON keys.
type Config struct {
	// Roots are the absolute directories the fs tool may touch.
	Roots  []string `json:"roots"`
	Policy Policy   `json:"policy"`

	MCPAddr   string `json:"mcp_addr"`
	PanelAddr string `json:"panel_addr"`

	// DispatchInlineBudgetMS is how long a call may run before the caller
	// gets {state:"pending", future_id} instead of the result.
	DispatchInlineBudgetMS int `json:"dispatch_inline_budget_ms"`

	// MaxOutputBytes bounds output returned inline; beyond it a preview and
	// an artifact are returned.
	MaxOutputBytes int `json:"max_output_bytes"`
	// MaxArtifactBytes hard-caps what a single capture may store.
	MaxArtifactBytes int64 `json:"max_artifact_bytes"`
	// MaxResultBytes bounds a detached result's JSON in the mailbox; larger
	// results spill to an artifact.
	MaxResultBytes int `json:"max_result_bytes"`

	ExecTimeoutMS     int `json:"exec_timeout_ms"`
	MaxExecTimeoutMS  int `json:"max_exec_timeout_ms"`
	MaxConcurrentExec int `json:"max_concurrent_exec"`
	MaxConcurrentJobs int `json:"max_concurrent_jobs"`
	// MaxConcurrentFutures caps generic (non-job) work running at once.
	MaxConcurrentFutures int `json:"max_concurrent_futures"`

	MaxArrivalsPerResponse int `json:"max_arrivals_per_response"`
	MaxArrivalBytes        int `json:"max_arrival_bytes"`

	RecipeMaxSteps int `json:"recipe_max_steps"`

	// MaxSessions bounds the interactive sessions (machine.session_start)
	// open at once.
	MaxSessions int `json:"max_sessions"`
	// SessionIdleTimeoutMS closes a session without a send or read for
	// this long.
	SessionIdleTimeoutMS int `json:"session_idle_timeout_ms"`
	// SessionBufferBytes is the output each session keeps for reading (its
	// newest bytes).
	SessionBufferBytes int `json:"session_buffer_bytes"`
	// SessionTranscriptBytes bounds the transcript a closed session keeps
	// as an artifact (its first bytes).
	SessionTranscriptBytes int `json:"session_transcript_bytes"`

	// ArtifactRetentionDays is how long an artifact is kept; older ones
	// are pruned unless something alive still refers to them. 0 keeps
	// artifacts forever.
	ArtifactRetentionDays int `json:"artifact_retention_days"`
	// ReceiptRetentionDays is how long an fs undo receipt (and its copy of
	// the prior content) is kept; an older receipt can no longer be undone.
	// 0 keeps receipts forever.
	ReceiptRetentionDays int `json:"receipt_retention_days"`
	// StorageBudgetBytes bounds the space fs undo copies and artifacts
	// take together, on top of their age limits: past it, the oldest that
	// nothing alive needs are pruned first. 0 means no budget.
	StorageBudgetBytes int64 `json:"storage_budget_bytes"`

	// BackupKeep is how many verified backups of hearth.db are kept in
	// <data>/backups (the daily one, the one before each migration and
	// those of hearth-tray backup); older ones are deleted.
	BackupKeep int `json:"backup_keep"`

	Oracle Armable `json:"oracle"`
	Wake   Wake    `json:"wake"`

	Tunnel Tunnel `json:"tunnel"`

	Update Update `json:"update"`

	// LoopbackSameUser admits a loopback connection (MCP endpoint, control
	// panel, tray control endpoint) only from a process of the account
	// Hearth runs as; false admits every account on this computer, for a
	// host where a connection's owner cannot be determined.
	LoopbackSameUser bool `json:"loopback_same_user"`
}

// Policy is the governance mode.
type Policy struct {
	Mode string `json:"mode"`
}

// Armable is a feature that is off until the operator arms it.
type Armable struct {
	Armed bool `json:"armed"`
}

// Wake configures automatic wake (internal/wake): Hearth's own ChatGPT
// window, the binder and the waker. Armed is the operator's switch (the
// control panel or this file, never a tool).
type Wake struct {
	Armed bool `json:"armed"`
	// BrowserPath overrides the Edge or Chrome found in the standard
	// install locations ("" finds one).
	BrowserPath string `json:"browser_path"`
	// DebounceMS is how long the newest undelivered result must have
	// waited before a wake.
	DebounceMS int `json:"debounce_ms"`
	// QuietMS is how long a conversation must not have called Hearth
	// before it is woken.
	QuietMS int `json:"quiet_ms"`
	// CooldownMS is the least time between two wakes of one tab.
	CooldownMS int `json:"cooldown_ms"`
	// MaxAttempts bounds the wakes sent until the conversation calls again.
	MaxAttempts int `json:"max_attempts"`
	// ProbeTTLMS is how long a route_probe nonce lives.
	ProbeTTLMS int `json:"probe_ttl_ms"`
}

// DefaultWake is the wake block written on first run: disarmed.
func DefaultWake() Wake {
	return Wake{DebounceMS: 3000, QuietMS: 20_000, CooldownMS: 300_000, MaxAttempts: 3, ProbeTTLMS: 3_600_000}
}

// Validate checks the wake settings; problems name their "wake.…" key.
func (w Wake) Validate() error {
	if w.BrowserPath != "" && !isAbs(w.BrowserPath) {
		return &Error{Key: "wake.browser_path", Msg: fmt.Sprintf("%q is not an absolute path", w.BrowserPath)}
	}
	ints := []struct {
		key       string
		v, lo, hi int
	}{
		{"wake.debounce_ms", w.DebounceMS, 0, 3_600_000},
		{"wake.quiet_ms", w.QuietMS, 0, 86_400_000},
		{"wake.cooldown_ms", w.CooldownMS, 0, 86_400_000},
		{"wake.max_attempts", w.MaxAttempts, 1, 100},
		{"wake.probe_ttl_ms", w.ProbeTTLMS, 1000, 7 * 86_400_000},
	}
	for _, f := range ints {
		if f.v < f.lo || f.v > f.hi {
			return &Error{Key: f.key, Msg: fmt.Sprintf("%d is out of range [%d, %d]", f.v, f.lo, f.hi)}
		}
	}
	return nil
}

// Update configures how Hearth keeps itself up to date (internal/update).
type Update struct {
	// Check looks for a new version at start and once a day. The request
	// carries the version and platform and nothing of the person or PC.
	Check bool `json:"check"`
	// URL overrides the release manifest's address built into Hearth; ""
	// uses the built-in one. https, or http to a loopback address only.
	URL string `json:"url"`
	// Auto installs an update by itself at a quiet moment (no call in
	// flight, no open session, no approval waiting) instead of waiting for
	// the operator's click.
	Auto bool `json:"auto"`
}

// Validate checks the update settings; problems name their "update.…" key.
func (u Update) Validate() error {
	if u.URL == "" {
		return nil
	}
	p, err := url.Parse(u.URL)
	if err != nil || p.Host == "" || (p.Scheme != "https" && p.Scheme != "http") {
		return &Error{Key: "update.url", Msg: fmt.Sprintf("%q is not an https address", u.URL)}
	}
	if p.Scheme == "http" {
		ip := net.ParseIP(p.Hostname())
		if p.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return &Error{Key: "update.url", Msg: fmt.Sprintf("%q is plain http: only an https address, or http to this computer (127.0.0.1, ::1, localhost), is allowed", u.URL)}
		}
	}
	return nil
}

// Default returns the configuration written on first run.
func Default() Config {
	home, _ := os.UserHomeDir()
	if home == "" {
		home = profileFolder()
	}
	var roots []string
	if home != "" {
		roots = append([]string{home}, outsideHome(home, movedFolders(), realPath)...)
	}
	return Config{
		Roots:                  roots,
		Policy:                 Policy{Mode: ModeAsk},
		MCPAddr:                "127.0.0.1:3000",
		PanelAddr:              "127.0.0.1:3001",
		DispatchInlineBudgetMS: 100,
		MaxOutputBytes:         16 << 10,
		MaxArtifactBytes:       64 << 20,
		MaxResultBytes:         64 << 10,
		ExecTimeoutMS:          60_000,
		MaxExecTimeoutMS:       3_600_000,
		MaxConcurrentExec:      16,
		MaxConcurrentJobs:      4,
		MaxConcurrentFutures:   8,
		MaxArrivalsPerResponse: 16,
		MaxArrivalBytes:        64 << 10,
		RecipeMaxSteps:         32,
		MaxSessions:            4,
		SessionIdleTimeoutMS:   1_800_000,
		SessionBufferBytes:     1 << 20,
		SessionTranscriptBytes: 4 << 20,
		ArtifactRetentionDays:  30,
		ReceiptRetentionDays:   30,
		BackupKeep:             DefaultBackupKeep,
		StorageBudgetBytes:     DefaultStorageBudgetBytes,
		Tunnel:                 Tunnel{Profile: DefaultTunnelProfile},
		Wake:                   DefaultWake(),
		Update:                 Update{Check: true},
		LoopbackSameUser:       true,
	}
}

// DefaultStorageBudgetBytes is storage_budget_bytes' default, 1 GiB: a
// small share of a laptop's disk, and months of ordinary edits.
const DefaultStorageBudgetBytes = 1 << 30

// MaxRetentionDays bounds artifact_retention_days and
// receipt_retention_days (about a hundred years; 0 already means forever).
const MaxRetentionDays = 36500

// DefaultBackupKeep and MaxBackupKeep: backup_keep's default and bounds.
const (
	DefaultBackupKeep = 7
	MaxBackupKeep     = 1000
)

// Error is a configuration problem tied to one key.
type Error struct {
	File string
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("config %s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("config %s: key %q: %s", e.File, e.Key, e.Msg)
}

// Load reads the config at path. When the file does not exist it is created
// from Default (with its directory) and the defaults are returned.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		c := Default()
		if err := Write(path, c); err != nil {
			return Config{}, err
		}
		return c, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("read config %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse decodes and validates config bytes; name labels errors.
func Parse(name string, data []byte) (Config, error) {
	if err := checkKeys(name, data); err != nil {
		return Config{}, err
	}
	c := Default()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Config{}, &Error{File: name, Key: te.Field, Msg: fmt.Sprintf("must be %s, not a JSON %s", jsonKind(te.Type.Kind().String()), te.Value)}
		}
		return Config{}, &Error{File: name, Msg: err.Error()}
	}
	if dec.More() {
		return Config{}, &Error{File: name, Msg: "trailing data after the JSON object"}
	}
	if err := c.Validate(); err != nil {
		var ce *Error
		if errors.As(err, &ce) {
			ce.File = name
		}
		return Config{}, err
	}
	return c, nil
}

func jsonKind(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"), strings.HasPrefix(k, "float"):
		return "a number"
	case k == "bool":
		return "true or false"
	case k == "slice":
		return "an array"
	case k == "struct", k == "map":
		return "an object"
	}
	return "a " + k
}

// checkKeys walks the raw JSON against Config's shape so an unknown key is
// reported with its full dotted path (encoding/json names only the leaf).
func checkKeys(name string, data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return &Error{File: name, Msg: "not a JSON object: " + err.Error()}
	}
	known := map[string]map[string]bool{
		"policy": {"mode": true},
		"oracle": {"armed": true},
		"wake":   {"armed": true, "browser_path": true, "debounce_ms": true, "quiet_ms": true, "cooldown_ms": true, "max_attempts": true, "probe_ttl_ms": true},
		"tunnel": {"client_path": true, "client_sha256": true, "tunnel_id": true, "profile": true, "autostart": true},
		"update": {"check": true, "url": true, "auto": true},
	}
	top := topKeys()
	for k, v := range raw {
		if !top[k] {
			return &Error{File: name, Key: k, Msg: "unknown key"}
		}
		if sub, ok := known[k]; ok {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(v, &m); err != nil {
				return &Error{File: name, Key: k, Msg: "must be an object"}
			}
			for sk := range m {
				if !sub[sk] {
					return &Error{File: name, Key: k + "." + sk, Msg: "unknown key"}
				}
			}
		}
	}
	return nil
}

func topKeys() map[string]bool {
	b, _ := json.Marshal(Config{})
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	keys := make(map[string]bool, len(m))
	for k := range m {
		keys[k] = true
	}
	return keys
}

// Validate checks every value; the first problem is returned as *Error.
func (c *Config) Validate() error {
	for i, r := range c.Roots {
		if !isAbs(r) {
			return &Error{Key: fmt.Sprintf("roots[%d]", i), Msg: fmt.Sprintf("%q is not an absolute path", r)}
		}
	}
	switch c.Policy.Mode {
	case ModeAsk, ModeTrusted, ModeReadOnly:
	default:
		return &Error{Key: "policy.mode", Msg: fmt.Sprintf("%q is not one of ask, trusted, read-only", c.Policy.Mode)}
	}
	if err := loopbackAddr("mcp_addr", c.MCPAddr); err != nil {
		return err
	}
	if err := loopbackAddr("panel_addr", c.PanelAddr); err != nil {
		return err
	}
	ints := []struct {
		key       string
		v, lo, hi int64
	}{
		{"dispatch_inline_budget_ms", int64(c.DispatchInlineBudgetMS), 0, 60_000},
		{"max_output_bytes", int64(c.MaxOutputBytes), 256, 16 << 20},
		{"max_artifact_bytes", c.MaxArtifactBytes, 1024, 4 << 30},
		{"max_result_bytes", int64(c.MaxResultBytes), 1024, 16 << 20},
		{"exec_timeout_ms", int64(c.ExecTimeoutMS), 1, 24 * 3_600_000},
		{"max_exec_timeout_ms", int64(c.MaxExecTimeoutMS), 1, 7 * 24 * 3_600_000},
		{"max_concurrent_exec", int64(c.MaxConcurrentExec), 1, 256},
		{"max_concurrent_jobs", int64(c.MaxConcurrentJobs), 1, 256},
		{"max_concurrent_futures", int64(c.MaxConcurrentFutures), 1, 256},
		{"max_arrivals_per_response", int64(c.MaxArrivalsPerResponse), 1, 1000},
		{"max_arrival_bytes", int64(c.MaxArrivalBytes), 1024, 16 << 20},
		{"recipe_max_steps", int64(c.RecipeMaxSteps), 1, 1000},
		{"max_sessions", int64(c.MaxSessions), 1, 64},
		{"session_idle_timeout_ms", int64(c.SessionIdleTimeoutMS), 1000, 7 * 24 * 3_600_000},
		{"session_buffer_bytes", int64(c.SessionBufferBytes), 4096, 64 << 20},
		{"session_transcript_bytes", int64(c.SessionTranscriptBytes), 1024, 1 << 30},
		{"artifact_retention_days", int64(c.ArtifactRetentionDays), 0, MaxRetentionDays},
		{"receipt_retention_days", int64(c.ReceiptRetentionDays), 0, MaxRetentionDays},
		{"backup_keep", int64(c.BackupKeep), 1, MaxBackupKeep},
		{"storage_budget_bytes", c.StorageBudgetBytes, 0, 1 << 50},
	}
	for _, f := range ints {
		if f.v < f.lo || f.v > f.hi {
			return &Error{Key: f.key, Msg: fmt.Sprintf("%d is out of range [%d, %d]", f.v, f.lo, f.hi)}
		}
	}
	if c.ExecTimeoutMS > c.MaxExecTimeoutMS {
		return &Error{Key: "exec_timeout_ms", Msg: "is larger than max_exec_timeout_ms"}
	}
	if err := c.Wake.Validate(); err != nil {
		return err
	}
	if err := c.Update.Validate(); err != nil {
		return err
	}
	return c.Tunnel.Validate()
}

// isAbs accepts the host's absolute paths, and drive-letter paths on
// Windows.
func isAbs(p string) bool {
	if filepath.IsAbs(p) {
		return true
	}
	return runtime.GOOS == "windows" && len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

func loopbackAddr(key, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return &Error{Key: key, Msg: fmt.Sprintf("%q is not host:port", addr)}
	}
	if port == "" {
		return &Error{Key: key, Msg: "port missing"}
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return &Error{Key: key, Msg: fmt.Sprintf("%q is not a loopback address; Hearth binds only to 127.0.0.1, ::1 or localhost", host)}
	}
	return nil
}

// Write stores c at path (creating the directory), as indented JSON.
func Write(path string, c Config) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create config directory: %w", err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'))
}

// outsideHome returns the folders of known that do not lie under home (nor
// under one returned before them): a person's Documents or Desktop moved
// to another drive (OneDrive on D:) is a root of its own, so the default
// roots reach the files where they really are. Lying under is judged on
// the paths as written and again on where they really are (real): a
// Documents that is a junction or link to another drive, though written
// under the home, is a root of its own too, since the roots refuse a path
// that resolves outside them.
func outsideHome(home string, known []string, real func(string) string) []string {
	var out []string
	under := func(p, dir string) bool {
		rel, err := filepath.Rel(dir, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	covered := func(k, dir string) bool { return under(k, dir) && under(real(k), real(dir)) }
	for _, k := range known {
		if k == "" || !filepath.IsAbs(k) || covered(k, home) {
			continue
		}
		if slices.ContainsFunc(out, func(o string) bool { return under(real(k), real(o)) }) {
			continue
		}
		out = append(out, filepath.Clean(k))
	}
	return out
}
